"""bnma_core.clustering"""
