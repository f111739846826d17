"""Streamlit custom components of the page, each a folder with its JavaScript source and its built bundle."""
