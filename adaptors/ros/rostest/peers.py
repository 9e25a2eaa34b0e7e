"""rospy peers for seat's ROS tests, run by rostest.Master.Peer under
Debian's /usr/bin/python3. The tutorial types (rospy_tutorials/AddTwoInts,
actionlib_tutorials/Fibonacci) are not packaged by Debian: their classes
are made here from their definitions with genpy, with the sums every ROS
tutorial prints.

  serve_add_two_ints NAME          answer a+b until killed
  call_add_two_ints NAME A B       print the sum
  serve_set_bool NAME              answer SetBool until killed
  echo NAME OUT                    publish each String of NAME on OUT at once
  publish_big NAME BYTES           publish a String of BYTES once a subscriber is there,
                                   then "small 0", "small 1"... ten times a second, and
                                   the String of BYTES again after "small 4"
  serve_fibonacci NAME             a simple action server
  call_fibonacci NAME ORDER        print each feedback, then the result
  cancel_fibonacci NAME ORDER      send a goal, cancel it at its first feedback, print its state
Each prints "ready" once it is registered.
"""
import sys
import threading
import time

import genpy.dynamic
import rospy


def service_class(srv_type, md5, request, response):
    classes = genpy.dynamic.generate_dynamic(srv_type + "Request", request)
    req = classes[srv_type + "Request"]
    classes = genpy.dynamic.generate_dynamic(srv_type + "Response", response)
    res = classes[srv_type + "Response"]
    return type(srv_type.split("/")[1], (object,), {
        "_type": srv_type, "_md5sum": md5, "_request_class": req, "_response_class": res})


def fibonacci_classes():
    """actionlib_tutorials' Fibonacci action, as genaction writes it."""
    from std_msgs.msg import Header
    from actionlib_msgs.msg import GoalID, GoalStatus
    pkg = "actionlib_tutorials/"
    texts = [
        (pkg + "FibonacciActionGoal", "Header header\nactionlib_msgs/GoalID goal_id\nFibonacciGoal goal\n"),
        (pkg + "FibonacciActionResult", "Header header\nactionlib_msgs/GoalStatus status\nFibonacciResult result\n"),
        (pkg + "FibonacciActionFeedback", "Header header\nactionlib_msgs/GoalStatus status\nFibonacciFeedback feedback\n"),
        (pkg + "FibonacciGoal", "int32 order\n"),
        (pkg + "FibonacciResult", "int32[] sequence\n"),
        (pkg + "FibonacciFeedback", "int32[] sequence\n"),
        ("std_msgs/Header", Header._full_text),
        ("actionlib_msgs/GoalID", GoalID._full_text),
        ("actionlib_msgs/GoalStatus", GoalStatus._full_text.split("=" * 80)[0]),
    ]
    text = ("FibonacciActionGoal action_goal\nFibonacciActionResult action_result\n"
            "FibonacciActionFeedback action_feedback\n")
    for name, t in texts:
        text += "=" * 80 + "\nMSG: " + name + "\n" + t
    return genpy.dynamic.generate_dynamic(pkg + "FibonacciAction", text)


AddTwoInts = service_class("rospy_tutorials/AddTwoInts", "6a2e34150c00229791cc89ff309fff21",
                           "int64 a\nint64 b\n", "int64 sum\n")


_out = threading.Lock()


def say(*words):
    """Prints one line, whole: callbacks run on rospy's threads."""
    with _out:
        print(*words, flush=True)


def main():
    mode, name = sys.argv[1], sys.argv[2]
    rospy.init_node("peer_" + mode, anonymous=True, disable_signals=True)
    if mode == "serve_add_two_ints":
        rospy.Service(name, AddTwoInts, lambda req: AddTwoInts._response_class(req.a + req.b))
        print("ready", flush=True)
        rospy.spin()
    elif mode == "call_add_two_ints":
        rospy.wait_for_service(name, timeout=20)
        call = rospy.ServiceProxy(name, AddTwoInts)
        print("sum", call(int(sys.argv[3]), int(sys.argv[4])).sum, flush=True)
    elif mode == "serve_set_bool":
        from std_srvs.srv import SetBool, SetBoolResponse
        rospy.Service(name, SetBool, lambda req: SetBoolResponse(True, "LED " + ("on" if req.data else "off")))
        print("ready", flush=True)
        rospy.spin()
    elif mode == "serve_empty":  # answers one call, then ends
        from std_srvs.srv import Empty, EmptyResponse
        called = threading.Event()

        def handle(req):
            say("called")
            called.set()
            return EmptyResponse()
        rospy.Service(name, Empty, handle)
        print("ready", flush=True)
        called.wait(60)
        time.sleep(1)  # the response goes out after handle returns
    elif mode == "serve_fibonacci":
        import actionlib
        fib = fibonacci_classes()

        def execute(goal):
            seq = [0, 1]
            for i in range(1, goal.order):
                if server.is_preempt_requested():
                    server.set_preempted()
                    return
                seq.append(seq[i] + seq[i - 1])
                server.publish_feedback(fib["actionlib_tutorials/FibonacciFeedback"](sequence=seq))
                rospy.sleep(0.05)
            server.set_succeeded(fib["actionlib_tutorials/FibonacciResult"](sequence=seq))

        server = actionlib.SimpleActionServer(name, fib["actionlib_tutorials/FibonacciAction"], execute_cb=execute, auto_start=False)
        server.start()
        print("ready", flush=True)
        rospy.spin()
    elif mode == "call_fibonacci":
        import actionlib
        fib = fibonacci_classes()
        client = actionlib.SimpleActionClient(name, fib["actionlib_tutorials/FibonacciAction"])
        if not client.wait_for_server(timeout=rospy.Duration(20)):
            sys.exit("no action server " + name)
        client.send_goal(fib["actionlib_tutorials/FibonacciGoal"](order=int(sys.argv[3])),
                         feedback_cb=lambda fb: say("feedback", list(fb.sequence)))
        client.wait_for_result(rospy.Duration(30))
        say("state", client.get_state(), "result", list(client.get_result().sequence))
    elif mode == "cancel_fibonacci":
        import actionlib
        fib = fibonacci_classes()
        client = actionlib.SimpleActionClient(name, fib["actionlib_tutorials/FibonacciAction"])
        if not client.wait_for_server(timeout=rospy.Duration(20)):
            sys.exit("no action server " + name)
        first = threading.Event()
        client.send_goal(fib["actionlib_tutorials/FibonacciGoal"](order=int(sys.argv[3])), feedback_cb=lambda fb: first.set())
        if not first.wait(20):
            sys.exit("no feedback")
        client.cancel_goal()
        client.wait_for_result(rospy.Duration(20))
        print("state", client.get_state(), flush=True)
    elif mode == "echo":
        from std_msgs.msg import String
        pub = rospy.Publisher(sys.argv[3], String, queue_size=100, tcp_nodelay=True)
        rospy.Subscriber(name, String, pub.publish, tcp_nodelay=True)
        print("ready", flush=True)
        rospy.spin()
    elif mode == "publish_big":
        from std_msgs.msg import String
        pub = rospy.Publisher(name, String, queue_size=100)
        print("ready", flush=True)
        while pub.get_num_connections() == 0:
            rospy.sleep(0.05)
        big = String("x" * int(sys.argv[3]))
        pub.publish(big)
        n = 0
        while not rospy.is_shutdown():
            pub.publish(String("small %d" % n))
            if n == 4:
                pub.publish(big)
            n += 1
            rospy.sleep(0.1)
    else:
        sys.exit("unknown mode " + mode)


main()
