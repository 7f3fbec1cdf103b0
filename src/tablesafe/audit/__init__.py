"""tablesafe.audit"""
