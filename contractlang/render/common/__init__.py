"""What several rooms share: layout that fits a width, numbers as people read them, tables shaped
for their files."""
