"""robodyn_ros: an ament_python package that also installs with pip."""

from glob import glob

import numpy
from setuptools import Extension, find_packages, setup

PACKAGE = "robodyn_ros"

# Single-state calls into the compiled kernels that bypass numba's dispatcher (a few C checks
# instead of ~1 µs of argument unboxing); see robodyn_ros/_state_call.c.
STATE_CALL = Extension(
    f"{PACKAGE}._state_call",
    sources=[f"{PACKAGE}/_state_call.c"],
    include_dirs=[numpy.get_include()],
)

setup(
    name=PACKAGE,
    version="0.1.0",
    description="Rigid-body dynamics from URDF for ROS 2, fast enough for every control cycle.",
    license="BSD-3-Clause",
    python_requires=">=3.11",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    ext_modules=[STATE_CALL],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
    ],
    install_requires=[
        "numpy>=1.26",
        "scipy>=1.11",
        "numba>=0.60",
        "urdfdom-py>=1.2",
        "xacro>=2.1",
        "rosbags>=0.10",
        "matplotlib>=3.8",
        "pyyaml",
        "threadpoolctl>=3.1",
        "coal>=3.0",
        "daqp>=0.11,<0.12",
    ],
    extras_require={
        "test": [
            "pytest>=8",
            "pytest-xdist>=3.5",
            "hypothesis>=6.100",
            "sybil>=9",
            "pin>=3.4",
            "example-robot-data>=4",
            "mujoco>=3.1",
            "ruff>=0.6",
            "mypy>=1.11",
            "types-PyYAML",
            "dask[distributed]>=2024.1",
        ],
        "dask": ["dask[distributed]>=2024.1"],
        "bench": ["pin>=3.4", "example-robot-data>=4", "matplotlib>=3.8", "mujoco>=3.1"],
    },
    entry_points={
        "console_scripts": [
            "robodyn = robodyn_ros.cli:main",
            "dynamics_node = robodyn_ros.ros.dynamics_node:main",
            "sim_node = robodyn_ros.ros.sim_node:main",
            "controller_node = robodyn_ros.ros.controller_node:main",
            "preview_node = robodyn_ros.ros.preview_node:main",
        ],
        "robodyn_ros.controllers": [
            "computed_torque = robodyn_ros.control.computed_torque:ComputedTorque",
            "gravity_compensation = robodyn_ros.control.gravity_compensation:GravityCompensation",
            "joint_impedance = robodyn_ros.control.joint_impedance:JointImpedance",
            "operational_space = robodyn_ros.control.operational_space_controller:OperationalSpace",
            "whole_body = robodyn_ros.control.whole_body:WholeBody",
        ],
    },
    zip_safe=False,
)
