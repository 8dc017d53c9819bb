"""execute"""
