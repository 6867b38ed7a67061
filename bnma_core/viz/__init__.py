"""plotly figure builders: plain functions returning ``plotly.graph_objects.Figure``.

Split by topic so each part of the library owns its figures; everything is re-exported here,
so callers write ``from bnma_core import viz; viz.dag_figure(...)``.
"""

from .calibration import *  # noqa: F401,F403
from .clustering import *  # noqa: F401,F403
from .diagnostics import *  # noqa: F401,F403
from .evaluation import *  # noqa: F401,F403
from .graphs import *  # noqa: F401,F403
from .kbest import *  # noqa: F401,F403
from .learning_curve import *  # noqa: F401,F403
from .mcmc import *  # noqa: F401,F403
from .naive import *  # noqa: F401,F403
from .patient import *  # noqa: F401,F403
from .ukdb import *  # noqa: F401,F403
