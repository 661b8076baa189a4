"""Force/torque readings over real DDS. sim_node's wrench_sensors: the fingertip arm falls limp
onto a table and its 'fore' sensor publishes, with each joint state and its stamp, the wrench
of the contacts of that stamp about the fore frame's origin (summed here from the `contacts`
message, the origin placed from the joint state), which once the arm creeps balances fore's
weight and the elbow's damping about the elbow; without a world every reading is zero; a frame
the robot lacks is refused naming the parameter; a sensor reads the contacts on its link and
those beyond it, not the others (a foot's sensor its own leg's). controller_node's
measured_wrenches: the operational-space controller with force control gets each fresh reading
in ControllerState.wrenches (its efforts those of the plugin fed the same states in this
process, dynamics in process or from compute_dynamics), none once the reading is older than
measured_wrench_max_age (open loop), and a reading on an unknown frame or with a NaN is refused
naming the field, the reading before it kept. The two nodes together close the loop: the
Panda's hand presses 10 N on a table while its motion servo pulls it along."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import Contacts
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros import Robot
from robodyn_ros.contact import collision_shapes, contact_points, world_of
from robodyn_ros.contact.time_step import ContactForce, moving_shapes
from robodyn_ros.control import ControllerState
from robodyn_ros.control.operational_space_controller import OperationalSpace
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.conversions import quaternion_from_rotation
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.robot_node import spin_until
from robodyn_ros.ros.sim_node import SimNode, wrench_sensors_parameter
from robodyn_ros.sim.wrench_sensor import sensor_reading
from robodyn_ros.testing import PANDA_FINGERS, example_robot_urdf

from helpers.nodes import Peer, listening, panda_state, stopped, wait_for
from helpers.robots import FINGERTIP_ARM, PANDA, Q0, TIP

SOLO = example_robot_urdf("solo12").read_text()
TABLE = "{planes: [{normal: [0, 0, 1], point: [0, 0, -0.5], friction: 1.0}]}"
PREFIX = "left/"
GRAVITY = np.array([0.0, 0.0, -9.81])  # m/s², the nodes' default
FORE_MASS, FORE_COM = 1.0, np.array([0.2, 0.0, 0.0])  # FINGERTIP_ARM's fore: kg, m in its frame
ELBOW_DAMPING = 1.0  # N·m·s/rad, FINGERTIP_ARM's elbow
AT_REST = 1.0  # s of sim time after which the arm creeps (|q̇| < 0.5 rad/s, |q̈| small)
SETTLED = 1.6  # s of sim time heard


def seconds(message) -> float:
    return message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec


def vector(message) -> np.ndarray:
    return np.array([message.x, message.y, message.z])


def reading(message: WrenchStamped) -> np.ndarray:
    return np.concatenate([vector(message.wrench.force), vector(message.wrench.torque)])


def test_the_fore_sensor_reads_the_contacts_of_its_stamp_about_its_origin(ros) -> None:
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=FINGERTIP_ARM), Parameter("world", value=TABLE),
        Parameter("wrench_sensors", value=["fore"]), Parameter("frame_prefix", value=PREFIX),
        Parameter("autostart", value=False)])
    peer = listening(ros, node, measured_wrenches=WrenchStamped, contacts=Contacts,
                    joint_states=JointState)
    try:
        assert wait_for(lambda: peer.measured_wrenches
                        and seconds(peer.measured_wrenches[-1]) >= SETTLED)
        readings = list(peer.measured_wrenches)
        last = seconds(readings[-1])
        assert wait_for(lambda: seconds(peer.contacts[-1]) >= last
                        and seconds(peer.joint_states[-1]) >= last)
    finally:
        stopped(peer)
    robot = Robot.from_urdf_string(FINGERTIP_ARM)
    contacts = {seconds(m): m.contacts for m in peer.contacts}
    states = {seconds(m): m for m in peer.joint_states}
    # one reading with each joint state, stamped as it, from the first
    assert [seconds(m) for m in readings] == sorted(t for t in states if t <= last)
    assert {m.header.frame_id for m in readings} == {PREFIX + "fore"}
    in_contact = 0
    for message in readings:
        t = seconds(message)
        q, qd = np.array(states[t].position), np.array(states[t].velocity)
        pose = robot.frame_pose(q, "fore")
        origin = pose[:3, 3]
        forces = [vector(c.force) for c in contacts[t]]
        expected = np.concatenate([
            np.sum(forces, axis=0) if forces else np.zeros(3),
            sum((np.cross(vector(c.point) - origin, vector(c.force)) for c in contacts[t]),
                np.zeros(3))])
        np.testing.assert_allclose(reading(message), expected, rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(expected).max()))
        in_contact += bool(contacts[t])
        if t >= AT_REST:  # fore's moments about the elbow: the reading's, its weight's and
            # the elbow's damping torque −d q̇ balance but for its small angular acceleration
            assert {c.link for c in contacts[t]} == {"fore"}
            weight = np.cross(pose[:3, :3] @ FORE_COM, FORE_MASS * GRAVITY)[1]
            balance = reading(message)[4] + weight - ELBOW_DAMPING * qd[1]
            assert abs(balance) <= 0.01 * abs(weight), (t, balance, weight)
    assert 0 < in_contact < len(readings)  # falling through the air, then on the table


def test_without_a_world_every_sensor_reads_zero_and_a_frame_it_lacks_is_refused(ros) -> None:
    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=FINGERTIP_ARM),
        Parameter("wrench_sensors", value=["fore", "upper"]),
        Parameter("autostart", value=False)])
    peer = listening(ros, node, measured_wrenches=WrenchStamped, joint_states=JointState)
    try:
        assert wait_for(lambda: len(peer.measured_wrenches) >= 20)
        readings = list(peer.measured_wrenches)
        assert wait_for(lambda: seconds(peer.joint_states[-1]) >= seconds(readings[-1]))
        refused = node.set_parameters([Parameter("wrench_sensors", value=["fore", "palm"])])[0]
        assert not refused.successful
        assert "wrench_sensors: robot 'arm' has no frame 'palm'" in refused.reason
        assert node.get_parameter("wrench_sensors").value == ["fore", "upper"]
    finally:
        stopped(peer)
    stamps = {seconds(m) for m in peer.joint_states}
    for message in readings:
        assert seconds(message) in stamps and reading(message).tolist() == [0.0] * 6
    for frame in ("fore", "upper"):  # each sensor at each joint state, from the first
        heard = [seconds(m) for m in readings if m.header.frame_id == frame]
        assert heard == sorted(t for t in stamps if t <= heard[-1])

    node = SimNode(parameter_overrides=[
        Parameter("robot_description", value=FINGERTIP_ARM),
        Parameter("wrench_sensors", value=["palm"]), Parameter("diagnostic_period", value=0.2)])
    peer = Peer(ros, node)
    try:
        assert wait_for(lambda: peer.reported("wrench_sensors: robot 'arm' has no frame 'palm'",
                                              DiagnosticStatus.ERROR))
        assert node.sim is None  # no robot in service
    finally:
        stopped(peer)


def touching(link: str, point, force) -> ContactForce:
    return ContactForce(link, np.array(point, dtype=float), np.array([0.0, 0.0, 1.0]),
                        np.array(force, dtype=float), np.zeros(3), 0.0)


@pytest.mark.parametrize(("urdf", "floating", "sensor", "read"), [
    (FINGERTIP_ARM, False, "fore", {"fore"}),
    (FINGERTIP_ARM, False, "upper", {"fore", "upper"}),
    (FINGERTIP_ARM, False, "base", {"fore", "upper"}),  # on the fixed base: every contact
    (SOLO, True, "FL_FOOT", {"FL_FOOT", "FL_LOWER_LEG"}),  # the foot is fixed to the shin
    (SOLO, True, "FL_UPPER_LEG", {"FL_FOOT", "FL_LOWER_LEG"}),
    (SOLO, True, "base_link", {"FL_FOOT", "FL_LOWER_LEG", "HR_FOOT"}),
], ids=["fore", "upper", "base", "solo-FL_FOOT", "solo-FL_UPPER_LEG", "solo-base_link"])
def test_a_sensor_reads_the_contacts_on_its_link_and_those_beyond(urdf, floating, sensor,
                                                                   read) -> None:
    """A sensor reads what touches its link (with the links fixed to it) and the links after
    it: a foot's sensor its leg's contacts, not the other feet's; about its frame's origin,
    summed here by hand from the contacts it reads."""
    robot = Robot.from_urdf_string(urdf, floating_base=floating)
    q = robot.neutral() if floating else np.array([0.3, -0.8])
    links = ("fore", "upper") if not floating else ("FL_FOOT", "FL_LOWER_LEG", "HR_FOOT")
    contacts = tuple(touching(link, [0.1 * k, -0.2, 0.05 * k], [1.0, 2.0 * k, 3.0 + k])
                     for k, link in enumerate(links))
    (wrench_sensor,) = wrench_sensors_parameter(robot, [sensor])
    origin = robot.frame_pose(q, sensor)[:3, 3]
    sensed = [c for c in contacts if c.link in read]
    expected = np.concatenate([sum((c.force for c in sensed), np.zeros(3)),
                               sum((np.cross(c.point - origin, c.force) for c in sensed),
                                   np.zeros(3))])
    np.testing.assert_allclose(sensor_reading(robot, q, contacts, wrench_sensor), expected,
                               rtol=0, atol=1e-12)


# -- controller_node ----------------------------------------------------------------------------

FORCE_CONTROL = {"frame": TIP, "force_axes": [0, 0, 1, 0, 0, 0],
                 "force_target": [0.0, 0.0, -10.0, 0.0, 0.0, 0.0], "force_integral_gain": 1.0}
MEASURED = [1.0, -2.0, 4.0, 0.1, 0.2, -0.3]  # N, N·m: the table pushes the hand up by 4 N
QD = np.linspace(-0.2, 0.2, 7)  # rad/s


def wrench(frame: str, values) -> WrenchStamped:
    message = WrenchStamped()
    message.header.frame_id = frame
    f, t = message.wrench.force, message.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = values
    return message


def stamped(t: float) -> Time:
    return Time(sec=int(t), nanosec=round((t - int(t)) * 1e9))


@pytest.fixture(params=["in_process", "service"])
def force_controller(ros, request):
    """A controller_node pressing with the panda's hand (force control along z with an
    integral, frame_prefix left/), dynamics in process or from a dynamics_node, and the Peer
    that hears its efforts in `efforts`."""
    node = ControllerNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA), Parameter("diagnostic_period", value=0.2),
        Parameter("frame_prefix", value=PREFIX), Parameter("controller", value="operational_space"),
        Parameter("dynamics_source", value=request.param),
        Parameter("measured_wrench_max_age", value=600.0),
        *(Parameter(f"controller_parameters.{name}", value=value)
          for name, value in FORCE_CONTROL.items())])
    peer = Peer(ros, node)
    dynamics = None
    try:
        if request.param == "service":
            dynamics = DynamicsNode(parameter_overrides=[Parameter("robot_description",
                                                                   value=PANDA)])
            peer.executor.add_node(dynamics)
            assert wait_for(node._dynamics.service_is_ready)
        peer.efforts = []
        peer.peer.create_subscription(Float64MultiArray, "effort_commands", peer.efforts.append,
                                      100)
        yield peer
    finally:
        peer.close()
        if dynamics is not None:
            dynamics.destroy_node()


def test_controller_node_passes_fresh_readings_to_the_controller(force_controller) -> None:
    """Each state is answered with the efforts of an in-process OperationalSpace fed the same
    states: no reading yet, then the reading (with the prefix) while fresh (the integral grows),
    then none once measured_wrench_max_age is below its age (the integral held: open loop),
    and again after an unknown frame and a NaN were refused (the reading before kept)."""
    peer = force_controller
    robot = Robot.from_urdf_string(PANDA)
    mirror, open_loop = OperationalSpace(), OperationalSpace()
    for controller in (mirror, open_loop):
        controller.configure(robot, FORCE_CONTROL)
    measured = {TIP: np.array(MEASURED)}

    def answered(t: float, q: np.ndarray, wrenches: dict) -> np.ndarray:
        """The efforts the node sends for the state at stamp t, which the mirror gives for
        the same state and wrenches (sent until they come: a state sent again is answered
        alike, for its time has not moved)."""
        expected = mirror.update(ControllerState(t, q, QD, wrenches=wrenches))
        message = panda_state(q, QD)
        message.header.stamp = stamped(t)
        since = len(peer.efforts)

        def sent() -> bool:
            peer.publish(JointState, "joint_states", message)
            time.sleep(0.05)
            return any(np.allclose(m.data, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
                       for m in peer.efforts[since:])

        assert wait_for(sent), (peer.efforts[-1:], expected)
        return expected

    q = np.array(Q0)
    answered(1.0, q, {})  # no reading yet
    open_loop.update(ControllerState(1.0, q, QD))  # its targets and posture: the mirror's
    peer.publish(WrenchStamped, "measured_wrenches", wrench(PREFIX + TIP, MEASURED))
    assert wait_for(lambda: peer.value("measured wrenches").startswith(TIP))
    for t in (1.5, 2.0):  # F_d + w = −6 N along z: the integral grows by −3 N each time
        q = q + 0.01
        closed_loop = answered(t, q, measured)
        assert np.abs(closed_loop - open_loop.update(ControllerState(t, q, QD))).max() > 0.1
    assert mirror.force_integral[2] == pytest.approx(-6.0, abs=1e-12)
    assert peer.node.set_parameters([Parameter("measured_wrench_max_age", value=1e-3)])[0] \
        .successful
    time.sleep(0.01)  # the reading now older than 1 ms
    answered(2.5, q + 0.01, {})  # stale: open loop, the integral held
    for bad, reason in [
        (wrench("palm", MEASURED), "measured_wrenches: header.frame_id 'palm' is not a frame"),
        (wrench(TIP, [0.0, np.nan, 0.0, 0.0, 0.0, 0.0]), "measured_wrenches: wrench is not "
         "finite"),
    ]:
        assert peer.until_reported(
            lambda bad=bad: peer.publish(WrenchStamped, "measured_wrenches", bad), reason)
    assert peer.node.set_parameters([Parameter("measured_wrench_max_age", value=600.0)])[0] \
        .successful
    answered(3.0, q + 0.02, measured)  # the good reading kept, fresh again


# -- the loop closed over DDS -------------------------------------------------------------------

PANDA_FILE = example_robot_urdf("panda")  # with collision meshes, for sim_node's world
LOCKED_FINGERS = "{" + ", ".join(f"{finger}: 0.0" for finger in PANDA_FINGERS) + "}"
# the arm along world y, the hand pointing down, its fingers the robot's lowest point
Q_PRESS = [np.pi / 2, 0.5, 0.0, -2.0, 0.0, 2.5, 0.785]
PRESSING = {"frame": TIP, "kp": [900.0] * 3 + [400.0] * 3, "force_axes": [0, 0, 1, 0, 0, 0],
            "force_target": [0.0, 0.0, -10.0, 0.0, 0.0, 0.0], "force_damping": 40.0,
            "force_integral_gain": 20.0}
ASIDE = np.array([0.0, -0.01, 0.0])  # m: the target 1 cm along the arm from the start
END = 1.2  # s of sim time: the hand lands at 0.1 s, the loop settles within 0.5 s more


def table_under_the_hand(robot: Robot, friction: float) -> str:
    """The world parameter of a table 5 mm under the lowest point of the links that move at
    Q_PRESS (a finger's)."""
    shapes = moving_shapes(robot, collision_shapes(PANDA_FILE.read_text(), PANDA_FILE.parent,
                                                   [PANDA_FILE.parents[4]]))
    floor = world_of({"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0], "friction": 0}]})
    lowest = min(contact_points(shape, robot.frame_pose(np.array(Q_PRESS), shape.link),
                                floor.planes[0]).heights.min() for shape in shapes)
    return (f"{{planes: [{{normal: [0, 0, 1], point: [0, 0, {float(lowest) - 0.005!r}], "
            f"friction: {friction}}}]}}")


@contextmanager
def spun(ros, *nodes) -> Iterator[Node]:
    """The nodes and a test node spun by one SingleThreadedExecutor in a thread (rclpy's
    multi-threaded one closes a loop of nodes in one process several times slower); the test
    node is yielded. Each node is destroyed on the way out, sim_node's loop stopped first."""
    runner = ros.create_node("pressing_test")
    executor, stop = SingleThreadedExecutor(), threading.Event()
    for node in (*nodes, runner):
        executor.add_node(node)
    spinner = threading.Thread(target=spin_until, args=(executor, stop), daemon=True)
    spinner.start()
    try:
        yield runner
    finally:
        stop.set()
        spinner.join(timeout=5.0)
        executor.shutdown(timeout_sec=5.0)
        for node in (*nodes, runner):
            if isinstance(node, SimNode):
                node.stop()
            node.destroy_node()


def test_the_hand_presses_ten_newtons_with_the_loop_closed_over_dds(ros) -> None:
    """sim_node (lockstep, as fast as it goes, a control cycle every 2 ms) reads the table's
    wrench at the hand and controller_node's operational-space controller presses 10 N down
    with it, its target 1 cm along the arm: the friction that holds the fingers short of it
    (μ 0.5) loads the motion servo, whose effort Λ couples into z, on top of the 10 N open
    loop. With the readings fed back, over the last half second the table carries 10 N within
    0.05 N on average and 0.3 N at each joint state (the contact solver's forces, on
    `contacts`; the friction between the fingers and the table redistributes now and then, a
    jolt the integral then takes out), the integral taking out more than 1 N (10 %) of the
    servo's share."""
    robot = Robot.from_urdf(PANDA_FILE, locked_joints=dict.fromkeys(PANDA_FINGERS, 0.0))
    shared = [Parameter("robot_description_file", value=str(PANDA_FILE)),
              Parameter("locked_joints", value=LOCKED_FINGERS)]
    controller = ControllerNode(parameter_overrides=[
        *shared, Parameter("controller", value="operational_space"),
        *(Parameter(f"controller_parameters.{name}", value=value)
          for name, value in PRESSING.items())])
    sim = SimNode(parameter_overrides=[
        *shared, Parameter("initial_positions", value=Q_PRESS),
        Parameter("world", value=table_under_the_hand(robot, 0.5)),
        Parameter("wrench_sensors", value=[TIP]), Parameter("lockstep", value=True),
        Parameter("real_time_factor", value=0.0), Parameter("publish_period", value=0.002),
        Parameter("autostart", value=False)])
    start = robot.frame_pose(np.array(Q_PRESS), TIP)
    target = PoseStamped()
    target.header.frame_id = robot.model.root_link
    p, o = target.pose.position, target.pose.orientation
    p.x, p.y, p.z = (start[:3, 3] + ASIDE).tolist()
    o.x, o.y, o.z, o.w = quaternion_from_rotation(start[:3, :3].tolist())
    contacts: list[Contacts] = []
    with spun(ros, sim, controller) as runner:
        runner.create_subscription(Contacts, "contacts", contacts.append, 1000)
        targets = runner.create_publisher(PoseStamped, "target_pose", 10)
        assert wait_for(lambda: (targets.publish(target), time.sleep(0.05))
                        and controller.controller.position_target is not None)
        sim.trigger_configure()
        assert sim.sim is not None, "sim_node refused the robot (its log says why)"
        assert wait_for(lambda: sim.count_subscribers("joint_states") > 0
                        and sim.count_subscribers("measured_wrenches") > 0
                        and sim.count_subscribers("contacts") > 0
                        and sim.count_publishers("effort_commands") > 0)
        sim.trigger_activate()
        assert wait_for(lambda: contacts and seconds(contacts[-1]) >= END), (
            seconds(contacts[-1]) if contacts else None)
        integral = controller.controller.force_integral[2]
        np.testing.assert_allclose(controller.controller.position_target, start[:3, 3] + ASIDE)
    late = [m for m in contacts if END - 0.5 <= seconds(m) <= END]
    assert len(late) >= 200 and all(m.contacts for m in late)
    pressed = np.array([vector(m.total_force)[2] for m in late])  # the table's normal is z
    assert abs(pressed.mean() - 10.0) <= 0.05 and np.abs(pressed - 10.0).max() <= 0.3, pressed
    assert integral > 1.0  # the servo's share, which open loop adds to the 10 N
