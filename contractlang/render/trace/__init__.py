"""A trace's summary, as `trace validate` and `trace facts` show it and write it as JSON."""
