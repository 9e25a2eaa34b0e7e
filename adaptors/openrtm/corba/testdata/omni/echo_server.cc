// echo_server serves a SeatTest::Echo object with omniORB: it prints
// "ior: IOR:..." and "ready", then serves until killed. With a second
// argument, a CosNaming name, it also binds the object there in the
// NameService given by -ORBInitRef.
#include <iostream>
#include <string>
#include "echo.hh"

class EchoImpl : public POA_SeatTest::Echo {
 public:
  EchoImpl() : notes_(0) {}
  char *say(const char *s) { return CORBA::string_dup(s); }
  SeatTest::DoubleSeq *scale(const SeatTest::DoubleSeq &v, CORBA::Double k) {
    SeatTest::DoubleSeq *w = new SeatTest::DoubleSeq(v);
    for (CORBA::ULong i = 0; i < w->length(); i++) (*w)[i] *= k;
    return w;
  }
  void fail(const char *why) { throw SeatTest::Oops(why, 42); }
  void note(const char *) { notes_++; }
  CORBA::Long count() { return notes_; }

 private:
  CORBA::Long notes_;
};

int main(int argc, char **argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
    EchoImpl *impl = new EchoImpl();
    PortableServer::ObjectId_var id = poa->activate_object(impl);
    CORBA::Object_var ref = impl->_this();
    CORBA::String_var ior = orb->object_to_string(ref);
    poa->the_POAManager()->activate();
    if (argc > 1) {
      CORBA::Object_var ns = orb->resolve_initial_references("NameService");
      CosNaming::NamingContextExt_var root = CosNaming::NamingContextExt::_narrow(ns);
      CosNaming::Name_var name = root->to_name(argv[1]);
      root->rebind(name, ref);
    }
    std::cout << "ior: " << ior.in() << std::endl;
    std::cout << "ready" << std::endl;
    orb->run();
  } catch (CORBA::Exception &e) {
    std::cout << "error: " << e._name() << std::endl;
    return 1;
  }
  return 0;
}
