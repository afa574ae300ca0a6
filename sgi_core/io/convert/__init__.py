"""Other tools' files converted to triples: the converter registry, format detection and trace
exports."""
