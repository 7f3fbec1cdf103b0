"""tablesafe.suppress"""
