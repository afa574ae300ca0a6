"""Live tracing servers: pull a window of traces from Phoenix as triples, push scores back as annotations."""
