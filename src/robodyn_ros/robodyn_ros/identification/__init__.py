"""Dynamic identification: from measured joint torques to the robot's parameters.

base_parameters finds the combinations of π the torques can tell apart; the estimation
fits them, and a physically consistent π, to normal equations accumulated over a recorded run.
"""
