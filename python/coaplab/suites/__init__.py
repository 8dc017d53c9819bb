"""suites"""
