"""analyse"""
