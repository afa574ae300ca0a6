"""The app's pages (each run by ``st.navigation`` in ``app.py``) and the panels of one page beside it."""
