"""tablesafe.report"""
