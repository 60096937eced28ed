"""asymmetric"""
