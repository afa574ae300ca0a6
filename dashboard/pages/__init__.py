"""The pages of the app (each run by ``st.navigation`` in ``app.py``) and the panels that belong to one page beside it."""
