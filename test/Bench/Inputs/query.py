"""Prints the rows of one SQL query on a tc-bench database, space-separated
(for FileCheck): query.py DB SQL"""
import sqlite3, sys

for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print(*row)
