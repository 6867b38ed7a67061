"""The class's deployment files (deploy/, README "Serving a class"): the script parses, and the
nginx configuration keeps a browser on one process and lets websockets through. Runs without
nginx (benchmarks/load_classroom_proxy.py measures the real thing)."""

from __future__ import annotations

import subprocess

from conftest import ROOT


def test_serve_class_script_parses():
    script = ROOT / "deploy" / "serve-class.sh"
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True).returncode == 0


def test_nginx_config_is_sticky_and_passes_websockets():
    conf = (ROOT / "deploy" / "nginx-class.conf").read_text()
    for line in ("hash $bnma_route consistent;", "proxy_http_version 1.1;",
                 "proxy_set_header Upgrade $http_upgrade;",
                 "proxy_set_header Connection $connection_upgrade;",
                 "# SERVERS BEGIN", "# SERVERS END", "listen 8500;"):
        assert line in conf, line
    # a route cookie for a browser that has none: not the client address (a NAT'd classroom)
    assert '"" $request_id;' in conf and "ip_hash" not in conf
