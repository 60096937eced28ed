"""latency_variation"""
