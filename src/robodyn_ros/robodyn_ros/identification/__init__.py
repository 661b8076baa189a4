"""Dynamic identification: from measured joint torques to the robot's parameters.

base_parameters finds the combinations of π the torques can tell apart; the estimation
fits them, and a physically consistent π, to normal equations accumulated over a recorded run.
from_bag is `robodyn bag identify` (a bag's runs → normal equations → the estimate), files
and plots what it writes, urdf_writer the URDF of an estimate.
"""
