"""bots"""
