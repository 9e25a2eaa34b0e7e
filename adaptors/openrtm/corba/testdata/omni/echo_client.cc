// echo_client calls a SeatTest::Echo object with omniORB, as a real
// omniORB client does (LocateRequest first, CodeSets context on the
// connection's first request). Usage:
//   echo_client TARGET TEXT [GONE] [-ORB options]
// TARGET is an IOR, a corbaloc URL, or a CosNaming name resolved in the
// NameService given by -ORBInitRef; GONE is the IOR of an object that
// does not exist. It prints one line per result and
// "done" at the end; any failure prints "error: ..." and exits 1.
#include <iostream>
#include <string>
#include "echo.hh"

static CosNaming::NamingContext_ptr rootContext(CORBA::ORB_ptr orb) {
  CORBA::Object_var obj = orb->resolve_initial_references("NameService");
  return CosNaming::NamingContext::_narrow(obj);
}

int main(int argc, char **argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    if (argc < 3) {
      std::cerr << "usage: echo_client TARGET TEXT" << std::endl;
      return 2;
    }
    std::string target = argv[1];
    CORBA::Object_var obj;
    if (target.rfind("IOR:", 0) == 0 || target.rfind("corbaloc:", 0) == 0) {
      obj = orb->string_to_object(target.c_str());
    } else {
      CosNaming::NamingContextExt_var root =
          CosNaming::NamingContextExt::_narrow(CosNaming::NamingContext_var(rootContext(orb)));
      obj = root->resolve_str(target.c_str());
    }
    SeatTest::Echo_var echo = SeatTest::Echo::_narrow(obj);
    if (CORBA::is_nil(echo)) {
      std::cout << "error: not an Echo" << std::endl;
      return 1;
    }
    CORBA::String_var r = echo->say(argv[2]);
    std::cout << "say: " << r.in() << std::endl;
    std::cout << "non_existent: " << (echo->_non_existent() ? "true" : "false") << std::endl;
    std::cout << "is_a Echo: " << (echo->_is_a("IDL:SeatTest/Echo:1.0") ? "true" : "false") << std::endl;
    std::cout << "is_a other: " << (echo->_is_a("IDL:SeatTest/Other:1.0") ? "true" : "false") << std::endl;
    SeatTest::DoubleSeq v;
    v.length(3);
    v[0] = 1.5; v[1] = -2; v[2] = 1e300;
    SeatTest::DoubleSeq_var w = echo->scale(v, 2);
    std::cout << "scale:";
    for (CORBA::ULong i = 0; i < w->length(); i++) std::cout << " " << w[i];
    std::cout << std::endl;
    try {
      echo->fail(argv[2]);
      std::cout << "fail: no exception" << std::endl;
    } catch (SeatTest::Oops &e) {
      std::cout << "fail: Oops " << e.why.in() << " " << e.code << std::endl;
    }
    echo->note("a");
    echo->note("b");
    std::cout << "count: " << echo->count() << std::endl;
    if (argc > 3) {
      // An object the server does not have.
      CORBA::Object_var o = orb->string_to_object(argv[3]);
      SeatTest::Echo_var gone = SeatTest::Echo::_unchecked_narrow(o);
      try {
        gone->count();
        std::cout << "gone: no exception" << std::endl;
      } catch (CORBA::OBJECT_NOT_EXIST &e) {
        std::cout << "gone: OBJECT_NOT_EXIST" << std::endl;
      }
    }
    std::cout << "done" << std::endl;
    orb->destroy();
  } catch (CORBA::SystemException &e) {
    std::cout << "error: system exception " << e._name() << " minor " << e.minor() << std::endl;
    return 1;
  } catch (CORBA::Exception &e) {
    std::cout << "error: exception " << e._name() << std::endl;
    return 1;
  }
  return 0;
}
