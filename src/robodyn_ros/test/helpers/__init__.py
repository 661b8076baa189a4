"""What the tests of several folders share: the robots and their Pinocchio oracles
(`cases`), the tolerances and comparisons (`tolerances`), robot descriptions and loads
(`robots`), checks against Pinocchio (`checks`), the preview's scenarios
(`preview_scenarios`) and the harness of the ROS tests (`nodes`).

The test folders are on no package path: pytest puts test/ on sys.path (``pythonpath`` in
pyproject.toml), so every test file imports these as ``helpers.<module>``.
"""
