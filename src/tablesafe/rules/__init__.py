"""tablesafe.rules"""
