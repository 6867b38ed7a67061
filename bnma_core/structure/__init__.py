"""bnma_core.structure"""
