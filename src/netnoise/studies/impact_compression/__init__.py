"""impact_compression"""
