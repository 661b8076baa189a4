"""Figures of the analyses and the preview (matplotlib, optional): the shared set-up."""
