"""Two runs of a RAG system compared: reading them, their keys, matching rows, their labels and
what changed."""
