# Builds rosidl interface packages against the ROS 2 wheels from PyPI (the Makefile passes it
# as -DCMAKE_PROJECT_INCLUDE; a normal ROS install never loads it).
#
# The wheels' exported targets <pkg>::<pkg>__rosidl_generator_py name the Python and NumPy
# include folders of the machine the wheels were built on, which do not exist here, and CMake
# refuses imported targets with missing include folders. Once the project is configured, point
# every such target at this interpreter's folders. Targets whose folders exist are left alone.
include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.21)  # cmake_language(DEFER), IMPORTED_TARGETS
  message(FATAL_ERROR "building against the ROS 2 wheels needs CMake 3.21 or newer")
endif()

function(robodyn_fix_wheel_python_includes)
  get_directory_property(targets DIRECTORY "${CMAKE_SOURCE_DIR}" IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    if(NOT target MATCHES "__rosidl_generator_py$")
      continue()
    endif()
    get_target_property(folders "${target}" INTERFACE_INCLUDE_DIRECTORIES)
    set(missing FALSE)
    foreach(folder IN LISTS folders)
      if(NOT folder MATCHES "^\\$<" AND NOT IS_DIRECTORY "${folder}")
        set(missing TRUE)
      endif()
    endforeach()
    if(missing)
      find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
      set_target_properties("${target}" PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${Python3_INCLUDE_DIRS};${Python3_NumPy_INCLUDE_DIRS}")
    endif()
  endforeach()
endfunction()

if(CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL robodyn_fix_wheel_python_includes)
endif()
