"""network_noise"""
