"""ROS 2 adapters: nodes that convert messages to arrays and call the layers below. The only
part of the package that imports rclpy."""
