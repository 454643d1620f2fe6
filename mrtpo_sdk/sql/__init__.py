"""Text-to-SQL machinery: a read-only sandbox, execution match, answer parsing and a Spider-layout loader."""
