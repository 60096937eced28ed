"""variability"""
