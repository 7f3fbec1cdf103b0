"""tablesafe.tabulate"""
