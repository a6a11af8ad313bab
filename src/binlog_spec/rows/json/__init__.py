"""JSON columns: MySQL's binary JSON (json_binary), its text (json_text), and the paths of its partial
updates (json_path)."""
