"""rospy peers for seat's ROS tests, run by rostest.Master.Peer under
Debian's /usr/bin/python3. The tutorial types (rospy_tutorials/AddTwoInts,
actionlib_tutorials/Fibonacci) are not packaged by Debian: their classes
are made here from their definitions with genpy, with the sums every ROS
tutorial prints.

  serve_add_two_ints NAME          answer a+b until killed
  call_add_two_ints NAME A B       print the sum
  serve_set_bool NAME              answer SetBool until killed
  publish_big NAME BYTES           publish a String of BYTES once a subscriber is there,
                                   then "small" five times a second
  serve_fibonacci NAME             a simple action server
  call_fibonacci NAME ORDER        print each feedback, then the result
Each prints "ready" once it is registered.
"""
import sys

import genpy.dynamic
import rospy


def service_class(srv_type, md5, request, response):
    classes = genpy.dynamic.generate_dynamic(srv_type + "Request", request)
    req = classes[srv_type + "Request"]
    classes = genpy.dynamic.generate_dynamic(srv_type + "Response", response)
    res = classes[srv_type + "Response"]
    return type(srv_type.split("/")[1], (object,), {
        "_type": srv_type, "_md5sum": md5, "_request_class": req, "_response_class": res})


AddTwoInts = service_class("rospy_tutorials/AddTwoInts", "6a2e34150c00229791cc89ff309fff21",
                           "int64 a\nint64 b\n", "int64 sum\n")


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
    elif mode == "publish_big":
        from std_msgs.msg import String
        pub = rospy.Publisher(name, String, queue_size=2)
        print("ready", flush=True)
        while pub.get_num_connections() == 0:
            rospy.sleep(0.05)
        pub.publish(String("x" * int(sys.argv[3])))
        while not rospy.is_shutdown():
            pub.publish(String("small"))
            rospy.sleep(0.2)
    else:
        sys.exit("unknown mode " + mode)


main()
