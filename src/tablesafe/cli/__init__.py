"""tablesafe.cli"""
