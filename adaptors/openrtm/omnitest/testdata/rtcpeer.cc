// rtcpeer is a small OpenRTM-style program on Debian's omniORB, built
// by the tests from OpenRTM-aist's IDL: the other side of seat's
// RT-Component. Its data is marshalled by omniORB's own CDR streams, as
// OpenRTM-aist C++ does (cdrMemoryStream, little endian, aligned from
// the payload's first byte).
//
//   rtcpeer [ORB options] cat NAME            what rtcat shows
//   rtcpeer [ORB options] act|deact|exit NAME what rtact, rtdeact, rtexit do
//   rtcpeer [ORB options] con NAME:PORT NAME:PORT [KEY=VALUE...]
//                                             what rtcon does
//   rtcpeer [ORB options] dis NAME:PORT       what rtdis does (disconnect_all)
//   rtcpeer [ORB options] serve NAME [TYPE]   a component NAME (bound as
//       NAME, a CosNaming path) with an InPort "in" and an OutPort "out"
//       of TYPE (TimedString by default; every other one-value type of
//       BasicDataType.idl but TimedWChar and TimedWString, and the
//       sequences of short, long, unsigned short and long, float, double
//       and octet): it prints
//       "got: VALUE" for each value that arrives, and writes each line of
//       its standard input on "out", printing "put: STATUS" per peer.
//       Its ports connect as a connector's properties say: corba_cdr or
//       data_service, push (flush) or pull (an InPort asks every 20 ms).
//   rtcpeer [ORB options] serve NAME TYPE echo
//       the same, but each value that arrives on "in" is written back on
//       "out" at once, as a C++ echo component does.
//
// A line "!bench N W" on a serving peer's standard input measures round
// trips: it writes N TimedStrings on "out", keeping W of them waiting
// for their echo on "in", and prints "rate: R" (round trips per second),
// printing nothing per value meanwhile.
//
// NAME is a CosNaming name in the NameService given by -ORBInitRef.
// Each command prints "rc: CODE" where the operation returns one.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <omniORB4/CORBA.h>

#include "BasicDataType.hh"
#include "DataPort.hh"
#include "DataPort_OpenRTM.hh"
#include "RTC.hh"

static CORBA::ORB_var orb;
static PortableServer::POA_var poa;
static omni_mutex outMu;  // one line of output at a time

static void say(const std::string &s) {
  omni_mutex_lock l(outMu);
  std::cout << s << std::endl;
}

static const char *rcName(RTC::ReturnCode_t rc) {
  static const char *names[] = {"RTC_OK", "RTC_ERROR", "BAD_PARAMETER", "UNSUPPORTED", "OUT_OF_RESOURCES", "PRECONDITION_NOT_MET"};
  return rc <= RTC::PRECONDITION_NOT_MET ? names[rc] : "?";
}

static const char *stateName(RTC::LifeCycleState s) {
  static const char *names[] = {"CREATED", "INACTIVE", "ACTIVE", "ERROR"};
  return s <= RTC::ERROR_STATE ? names[s] : "?";
}

static CORBA::Object_ptr resolve(const char *name) {
  CORBA::Object_var ns = orb->resolve_initial_references("NameService");
  CosNaming::NamingContextExt_var root = CosNaming::NamingContextExt::_narrow(ns);
  return root->resolve_str(name);
}

static RTC::RTObject_ptr component(const std::string &name) {
  CORBA::Object_var obj = resolve(name.c_str());
  RTC::RTObject_var rtc = RTC::RTObject::_narrow(obj);
  if (CORBA::is_nil(rtc)) throw std::string("not an RTObject: ") + name;
  return rtc._retn();
}

static std::string nvString(const SDOPackage::NVList &nv, const char *key) {
  for (CORBA::ULong i = 0; i < nv.length(); i++) {
    const char *s;
    if (strcmp(nv[i].name, key) == 0 && (nv[i].value >>= s)) return s;
  }
  return "";
}

static void setNV(SDOPackage::NVList &nv, const char *key, const char *value) {
  CORBA::ULong n = nv.length();
  nv.length(n + 1);
  nv[n].name = CORBA::string_dup(key);
  nv[n].value <<= value;
}

// port finds NAME:PORT, the port whose profile name is INSTANCE.PORT.
static RTC::PortService_ptr port(const std::string &spec) {
  size_t colon = spec.rfind(':');
  if (colon == std::string::npos) throw std::string("want NAME:PORT, not ") + spec;
  RTC::RTObject_var rtc = component(spec.substr(0, colon));
  std::string suffix = "." + spec.substr(colon + 1);
  RTC::PortServiceList_var ports = rtc->get_ports();
  for (CORBA::ULong i = 0; i < ports->length(); i++) {
    RTC::PortProfile_var pp = ports[i]->get_port_profile();
    std::string n(pp->name);
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      return RTC::PortService::_duplicate(ports[i]);
  }
  throw std::string("no port ") + spec;
}

static int cat(const std::string &name) {
  RTC::RTObject_var rtc = component(name);
  RTC::ComponentProfile_var cp = rtc->get_component_profile();
  say(std::string("instance: ") + cp->instance_name.in());
  say(std::string("type: ") + cp->type_name.in());
  RTC::ExecutionContextList_var ecs = rtc->get_owned_contexts();
  for (CORBA::ULong i = 0; i < ecs->length(); i++) {
    std::ostringstream o;
    o << "ec" << i << ": " << stateName(ecs[i]->get_component_state(rtc)) << " rate " << ecs[i]->get_rate()
      << " alive " << (rtc->is_alive(ecs[i]) ? "yes" : "no");
    say(o.str());
  }
  RTC::PortServiceList_var ports = rtc->get_ports();
  for (CORBA::ULong i = 0; i < ports->length(); i++) {
    RTC::PortProfile_var pp = ports[i]->get_port_profile();
    std::ostringstream o;
    o << "port: " << pp->name.in() << " " << nvString(pp->properties, "port.port_type") << " "
      << nvString(pp->properties, "dataport.data_type") << " connectors " << pp->connector_profiles.length();
    for (CORBA::ULong j = 0; j < pp->connector_profiles.length(); j++)
      o << " [" << pp->connector_profiles[j].name.in() << " " << nvString(pp->connector_profiles[j].properties, "dataport.interface_type") << "]";
    say(o.str());
  }
  SDOPackage::Configuration_var cfg = rtc->get_configuration();
  if (!CORBA::is_nil(cfg)) {
    SDOPackage::ConfigurationSetList_var sets = cfg->get_configuration_sets();
    SDOPackage::ConfigurationSet_var active = cfg->get_active_configuration_set();
    say(std::string("config: ") + (sets->length() > 0 ? sets[0].id.in() : "") + " active " + active->id.in());
  }
  SDOPackage::OrganizationList_var orgs = rtc->get_organizations();
  CORBA::String_var id = rtc->get_sdo_id();
  say(std::string("sdo: ") + id.in());
  return 0;
}

// --- data -----------------------------------------------------------------

// codec marshals one data type with omniORB's CDR, as OpenRTM's
// CORBA_CdrMemoryStream does.
struct Codec {
  virtual ~Codec() {}
  virtual const char *id() = 0;
  virtual bool encode(const std::string &line, cdrMemoryStream &cdr) = 0;
  virtual std::string decode(cdrMemoryStream &cdr) = 0;
};

static std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

template <class T>
static void stamp(T &v) {
  v.tm.sec = 1700000000;
  v.tm.nsec = 5;
}

struct StringCodec : Codec {
  const char *id() { return "IDL:RTC/TimedString:1.0"; }
  bool encode(const std::string &line, cdrMemoryStream &cdr) {
    RTC::TimedString v;
    stamp(v);
    v.data = CORBA::string_dup(line.c_str());
    v >>= cdr;
    return true;
  }
  std::string decode(cdrMemoryStream &cdr) {
    RTC::TimedString v;
    v <<= cdr;
    return std::string(v.data.in());
  }
};

template <class T, class E>
struct SeqCodec : Codec {
  const char *id_;
  SeqCodec(const char *id) : id_(id) {}
  const char *id() { return id_; }
  bool encode(const std::string &line, cdrMemoryStream &cdr) {
    T v;
    stamp(v);
    std::vector<std::string> items = split(line);
    v.data.length(items.size());
    for (size_t i = 0; i < items.size(); i++) v.data[i] = (E)atof(items[i].c_str());
    v >>= cdr;
    return true;
  }
  std::string decode(cdrMemoryStream &cdr) {
    T v;
    v <<= cdr;
    std::ostringstream o;
    for (CORBA::ULong i = 0; i < v.data.length(); i++) o << (i ? "," : "") << +v.data[i];
    return o.str();
  }
};

// The one-value types, as a ConsoleIn of each would write them:
// a number (char: the character, boolean: true or false).
enum Shown { asNumber, asChar, asBool };

template <class T, class E, Shown how>
struct ScalarCodec : Codec {
  const char *id_;
  ScalarCodec(const char *id) : id_(id) {}
  const char *id() { return id_; }
  bool encode(const std::string &line, cdrMemoryStream &cdr) {
    T v;
    stamp(v);
    if (how == asChar) v.data = line.empty() ? 0 : line[0];
    else if (how == asBool) v.data = line == "true" || line == "1";
    else v.data = (E)atof(line.c_str());
    v >>= cdr;
    return true;
  }
  std::string decode(cdrMemoryStream &cdr) {
    T v;
    v <<= cdr;
    std::ostringstream o;
    if (how == asChar) o << (char)v.data;
    else if (how == asBool) o << (v.data ? "true" : "false");
    else o << +v.data;  // + prints an octet as a number
    return o.str();
  }
};

static Codec *codecFor(const std::string &t) {
  if (t == "TimedString") return new StringCodec();
  if (t == "TimedLong") return new ScalarCodec<RTC::TimedLong, CORBA::Long, asNumber>("IDL:RTC/TimedLong:1.0");
  if (t == "TimedDouble") return new ScalarCodec<RTC::TimedDouble, CORBA::Double, asNumber>("IDL:RTC/TimedDouble:1.0");
  if (t == "TimedState") return new ScalarCodec<RTC::TimedState, CORBA::Short, asNumber>("IDL:RTC/TimedState:1.0");
  if (t == "TimedShort") return new ScalarCodec<RTC::TimedShort, CORBA::Short, asNumber>("IDL:RTC/TimedShort:1.0");
  if (t == "TimedUShort") return new ScalarCodec<RTC::TimedUShort, CORBA::UShort, asNumber>("IDL:RTC/TimedUShort:1.0");
  if (t == "TimedULong") return new ScalarCodec<RTC::TimedULong, CORBA::ULong, asNumber>("IDL:RTC/TimedULong:1.0");
  if (t == "TimedFloat") return new ScalarCodec<RTC::TimedFloat, CORBA::Float, asNumber>("IDL:RTC/TimedFloat:1.0");
  if (t == "TimedOctet") return new ScalarCodec<RTC::TimedOctet, CORBA::Octet, asNumber>("IDL:RTC/TimedOctet:1.0");
  if (t == "TimedChar") return new ScalarCodec<RTC::TimedChar, CORBA::Char, asChar>("IDL:RTC/TimedChar:1.0");
  if (t == "TimedBoolean") return new ScalarCodec<RTC::TimedBoolean, CORBA::Boolean, asBool>("IDL:RTC/TimedBoolean:1.0");
  if (t == "TimedFloatSeq") return new SeqCodec<RTC::TimedFloatSeq, CORBA::Float>("IDL:RTC/TimedFloatSeq:1.0");
  if (t == "TimedDoubleSeq") return new SeqCodec<RTC::TimedDoubleSeq, CORBA::Double>("IDL:RTC/TimedDoubleSeq:1.0");
  if (t == "TimedShortSeq") return new SeqCodec<RTC::TimedShortSeq, CORBA::Short>("IDL:RTC/TimedShortSeq:1.0");
  if (t == "TimedLongSeq") return new SeqCodec<RTC::TimedLongSeq, CORBA::Long>("IDL:RTC/TimedLongSeq:1.0");
  if (t == "TimedUShortSeq") return new SeqCodec<RTC::TimedUShortSeq, CORBA::UShort>("IDL:RTC/TimedUShortSeq:1.0");
  if (t == "TimedULongSeq") return new SeqCodec<RTC::TimedULongSeq, CORBA::ULong>("IDL:RTC/TimedULongSeq:1.0");
  if (t == "TimedOctetSeq") return new SeqCodec<RTC::TimedOctetSeq, CORBA::Octet>("IDL:RTC/TimedOctetSeq:1.0");
  throw std::string("unknown type ") + t;
}

// --- a component ----------------------------------------------------------

class PortImpl;
static PortImpl *echoTo;  // the OutPort an echo component writes back on

// The round trips of a "!bench" run: what has come back so far.
static omni_mutex benchMu;
static omni_condition benchCond(&benchMu);
static long benchGot;
static bool quiet;

static void echo(const std::string &text);

// receive handles a value that arrived on an InPort (by put, push or a
// pull's answer): printed as "got: VALUE", echoed, or counted.
static OpenRTM::PortStatus receive(Codec *codec, const CORBA::Octet *buf, CORBA::ULong len) {
  if (quiet) {  // a bench run: count, nothing else
    omni_mutex_lock l(benchMu);
    benchGot++;
    benchCond.signal();
    return OpenRTM::PORT_OK;
  }
  // As OpenRTM's CORBA_CdrMemoryStream reads: the payload copied into a
  // stream, little endian (setByteSwapFlag's argument is "little
  // endian"), aligned from byte 0.
  cdrMemoryStream cdr;
  cdr.setByteSwapFlag(true);
  cdr.put_octet_array(buf, len);
  try {
    std::string text = codec->decode(cdr);
    if (echoTo) {
      echo(text);
      return OpenRTM::PORT_OK;
    }
    say("got: " + text);
  } catch (CORBA::MARSHAL &) {
    std::ostringstream o;
    o << "undecodable: " << len << " bytes";
    say(o.str());
    return OpenRTM::PORT_ERROR;
  }
  return OpenRTM::PORT_OK;
}

// An InPort's object for a push connection: OpenRTM's InPortCdr
// (corba_cdr) or the OMG's DataPushService (data_service).
class InPortCdrImpl : public POA_OpenRTM::InPortCdr {
 public:
  InPortCdrImpl(Codec *c) : codec_(c) {}
  OpenRTM::PortStatus put(const OpenRTM::CdrData &data) { return receive(codec_, data.get_buffer(), data.length()); }

 private:
  Codec *codec_;
};

class DataPushImpl : public POA_RTC::DataPushService {
 public:
  DataPushImpl(Codec *c) : codec_(c) {}
  RTC::PortStatus push(const RTC::OctetSeq &data) {
    return (RTC::PortStatus)receive(codec_, data.get_buffer(), data.length());
  }

 private:
  Codec *codec_;
};

// latest is an OutPort's pull connection: the newest value written, which
// the next get or pull takes (BUFFER_EMPTY when there is none).
struct Latest {
  omni_mutex mu;
  std::string data;
  bool fresh;
  Latest() : fresh(false) {}
  bool take(std::string &out) {
    omni_mutex_lock l(mu);
    if (!fresh) return false;
    out = data;
    fresh = false;
    return true;
  }
};

class OutPortCdrImpl : public POA_OpenRTM::OutPortCdr {
 public:
  OutPortCdrImpl(Latest *l) : l_(l) {}
  OpenRTM::PortStatus get(OpenRTM::CdrData_out data) {
    data = new OpenRTM::CdrData();
    std::string v;
    if (!l_->take(v)) return OpenRTM::BUFFER_EMPTY;
    data->length(v.size());
    memcpy(data->get_buffer(), v.data(), v.size());
    return OpenRTM::PORT_OK;
  }

 private:
  Latest *l_;
};

class DataPullImpl : public POA_RTC::DataPullService {
 public:
  DataPullImpl(Latest *l) : l_(l) {}
  RTC::PortStatus pull(RTC::OctetSeq_out data) {
    data = new RTC::OctetSeq();
    std::string v;
    if (!l_->take(v)) return RTC::BUFFER_EMPTY;
    data->length(v.size());
    memcpy(data->get_buffer(), v.data(), v.size());
    return RTC::PORT_OK;
  }

 private:
  Latest *l_;
};

// A puller asks an OutPort for data every 20 ms (an InPort's pull
// connection), until the connection ends.
class Puller : public omni_thread {
 public:
  Puller(Codec *c, CORBA::Object_ptr o, bool cdr) : codec_(c), obj_(CORBA::Object::_duplicate(o)), cdr_(cdr), stop(false) {}
  volatile bool stop;
  void go() { start_undetached(); }
  void *run_undetached(void *) {
    OpenRTM::OutPortCdr_var get = cdr_ ? OpenRTM::OutPortCdr::_narrow(obj_) : OpenRTM::OutPortCdr::_nil();
    RTC::DataPullService_var pull = cdr_ ? RTC::DataPullService::_nil() : RTC::DataPullService::_narrow(obj_);
    while (!stop) {
      try {
        if (cdr_) {
          OpenRTM::CdrData_var d;
          if (get->get(d) == OpenRTM::PORT_OK) receive(codec_, d->get_buffer(), d->length());
        } else {
          RTC::OctetSeq_var d;
          if (pull->pull(d) == RTC::PORT_OK) receive(codec_, d->get_buffer(), d->length());
        }
      } catch (CORBA::Exception &) {
      }
      omni_thread::sleep(0, 20000000);
    }
    return 0;
  }

 private:
  Codec *codec_;
  CORBA::Object_var obj_;
  bool cdr_;
};

class PortImpl : public POA_RTC::PortService {
 public:
  PortImpl(const std::string &name, bool in, Codec *c) : name_(name), in_(in), codec_(c) {}
  RTC::RTObject_var owner;

  RTC::PortProfile *get_port_profile() {
    RTC::PortProfile *pp = new RTC::PortProfile();
    pp->name = CORBA::string_dup(name_.c_str());
    pp->port_ref = _this();
    pp->owner = RTC::RTObject::_duplicate(owner);
    omni_mutex_lock l(mu_);
    pp->connector_profiles = conns_;
    setNV(pp->properties, "port.port_type", in_ ? "DataInPort" : "DataOutPort");
    setNV(pp->properties, "dataport.data_type", codec_->id());
    setNV(pp->properties, "dataport.dataflow_type", "push,pull");
    setNV(pp->properties, "dataport.interface_type", "corba_cdr,data_service");
    return pp;
  }
  RTC::ConnectorProfileList *get_connector_profiles() {
    omni_mutex_lock l(mu_);
    return new RTC::ConnectorProfileList(conns_);
  }
  RTC::ConnectorProfile *get_connector_profile(const char *id) {
    omni_mutex_lock l(mu_);
    for (CORBA::ULong i = 0; i < conns_.length(); i++)
      if (strcmp(conns_[i].connector_id, id) == 0) return new RTC::ConnectorProfile(conns_[i]);
    return new RTC::ConnectorProfile();
  }
  RTC::ReturnCode_t connect(RTC::ConnectorProfile &cp) {
    if (strlen(cp.connector_id) == 0) cp.connector_id = CORBA::string_dup("rtcpeer-connector");
    return cp.ports[0]->notify_connect(cp);
  }
  RTC::ReturnCode_t notify_connect(RTC::ConnectorProfile &cp) {
    CORBA::ULong self = 0;
    for (; self < cp.ports.length(); self++)
      if (cp.ports[self]->_is_equivalent(_this())) break;
    std::string iface = nvString(cp.properties, "dataport.interface_type");
    bool cdr = iface != "data_service";
    bool pull = nvString(cp.properties, "dataport.dataflow_type") == "pull";
    // Publish what the other side needs: an InPort's object for push, an
    // OutPort's for pull.
    Latest *latest = 0;
    if (in_ != pull) {
      std::string prefix = std::string("dataport.") + (cdr ? "corba_cdr." : "data_service.") + (in_ ? "inport" : "outport");
      PortableServer::ServantBase *sv;
      if (in_) {
        sv = cdr ? (PortableServer::ServantBase *)new InPortCdrImpl(codec_) : (PortableServer::ServantBase *)new DataPushImpl(codec_);
      } else {
        latest = new Latest();
        sv = cdr ? (PortableServer::ServantBase *)new OutPortCdrImpl(latest) : (PortableServer::ServantBase *)new DataPullImpl(latest);
      }
      PortableServer::ObjectId_var oid = poa->activate_object(sv);
      CORBA::Object_var ref = poa->id_to_reference(oid);
      CORBA::String_var ior = orb->object_to_string(ref);
      setNV(cp.properties, (prefix + "_ior").c_str(), ior.in());
    }
    if (self + 1 < cp.ports.length()) {
      RTC::ReturnCode_t rc = cp.ports[self + 1]->notify_connect(cp);
      if (rc != RTC::RTC_OK) return rc;
    }
    // Take what the other side published.
    Puller *puller = 0;
    if (in_ == pull) {
      std::string prefix = std::string("dataport.") + (cdr ? "corba_cdr." : "data_service.") + (in_ ? "outport" : "inport");
      std::string ior = nvString(cp.properties, (prefix + "_ior").c_str());
      if (ior.empty()) return RTC::BAD_PARAMETER;
      CORBA::Object_var obj = orb->string_to_object(ior.c_str());
      if (in_) {
        puller = new Puller(codec_, obj, cdr);
        puller->go();
      } else {
        omni_mutex_lock l(mu_);
        Sink s;
        if (cdr) s.cdr = OpenRTM::InPortCdr::_narrow(obj);
        else s.push = RTC::DataPushService::_narrow(obj);
        sinks_.push_back(s);
      }
    }
    {
      omni_mutex_lock l(mu_);
      if (latest) latests_.push_back(latest);
      if (puller) pullers_.push_back(puller);
    }
    omni_mutex_lock l(mu_);
    CORBA::ULong n = conns_.length();
    conns_.length(n + 1);
    conns_[n] = cp;
    say(std::string("connected: ") + cp.connector_id.in());
    return RTC::RTC_OK;
  }
  RTC::ReturnCode_t disconnect(const char *id) {
    RTC::ConnectorProfile_var cp = get_connector_profile(id);
    if (cp->ports.length() == 0) return RTC::BAD_PARAMETER;
    return cp->ports[0]->notify_disconnect(id);
  }
  RTC::ReturnCode_t disconnect_all() {
    RTC::ConnectorProfileList_var all = get_connector_profiles();
    for (CORBA::ULong i = 0; i < all->length(); i++) disconnect(all[i].connector_id);
    return RTC::RTC_OK;
  }
  RTC::ReturnCode_t notify_disconnect(const char *id) {
    RTC::ConnectorProfile_var cp;
    {
      omni_mutex_lock l(mu_);
      CORBA::ULong i = 0;
      for (; i < conns_.length(); i++)
        if (strcmp(conns_[i].connector_id, id) == 0) break;
      if (i == conns_.length()) return RTC::BAD_PARAMETER;
      cp = new RTC::ConnectorProfile(conns_[i]);
      for (CORBA::ULong j = i; j + 1 < conns_.length(); j++) conns_[j] = conns_[j + 1];
      conns_.length(conns_.length() - 1);
      // The tests disconnect one connection at a time: what it made goes.
      sinks_.clear();
      latests_.clear();
      for (size_t j = 0; j < pullers_.size(); j++) pullers_[j]->stop = true;
      pullers_.clear();
    }
    say(std::string("disconnected: ") + id);
    for (CORBA::ULong self = 0; self + 1 < cp->ports.length(); self++)
      if (cp->ports[self]->_is_equivalent(_this())) {
        try {
          cp->ports[self + 1]->notify_disconnect(id);
        } catch (CORBA::Exception &) {
        }
        break;
      }
    return RTC::RTC_OK;
  }
  SDOPackage::OrganizationList *get_owned_organizations() { return new SDOPackage::OrganizationList(); }

  // write sends one line to every connection.
  void write(const std::string &line) {
    cdrMemoryStream cdr;
    cdr.setByteSwapFlag(true);  // little endian, as OpenRTM's OutPort writes
    codec_->encode(line, cdr);
    OpenRTM::CdrData data;
    data.length(cdr.bufSize());
    memcpy(data.get_buffer(), cdr.bufPtr(), cdr.bufSize());
    std::vector<Sink> sinks;
    {
      omni_mutex_lock l(mu_);
      sinks = sinks_;
      std::string v((const char *)cdr.bufPtr(), cdr.bufSize());
      for (size_t i = 0; i < latests_.size(); i++) {
        omni_mutex_lock ll(latests_[i]->mu);
        latests_[i]->data = v;
        latests_[i]->fresh = true;
      }
    }
    for (size_t i = 0; i < sinks.size(); i++) {
      try {
        OpenRTM::PortStatus st;
        if (!CORBA::is_nil(sinks[i].cdr)) {
          st = sinks[i].cdr->put(data);
        } else {
          RTC::OctetSeq os;
          os.length(data.length());
          memcpy(os.get_buffer(), data.get_buffer(), data.length());
          st = (OpenRTM::PortStatus)sinks[i].push->push(os);
        }
        if (!quiet && !echoTo) say(std::string("put: ") + (st == OpenRTM::PORT_OK ? "PORT_OK" : "not ok"));
      } catch (CORBA::Exception &e) {
        say(std::string("put: ") + e._name());
      }
    }
  }

 private:
  std::string name_;
  bool in_;
  Codec *codec_;
  omni_mutex mu_;
  RTC::ConnectorProfileList conns_;
  // An OutPort's push connections: the InPortCdr or DataPushService it
  // writes to.
  struct Sink {
    OpenRTM::InPortCdr_var cdr;
    RTC::DataPushService_var push;
  };
  std::vector<Sink> sinks_;
  std::vector<Latest *> latests_;  // an OutPort's pull connections
  std::vector<Puller *> pullers_;  // an InPort's pull connections
};

static void echo(const std::string &text) { echoTo->write(text); }

// bench writes n values on out, w at most waiting for their echo, and
// prints the round trips per second.
static void bench(PortImpl *out, long n, long w) {
  {
    omni_mutex_lock l(benchMu);
    benchGot = 0;
    quiet = true;
  }
  omni_time_t start;
  omni_thread::get_time(start);
  long sent = 0;
  for (;;) {
    long got;
    {
      omni_mutex_lock l(benchMu);
      while (benchGot < n && sent - benchGot >= w) benchCond.wait();
      got = benchGot;
    }
    if (got >= n) break;
    out->write("ping");
    sent++;
  }
  omni_time_t end;
  omni_thread::get_time(end);
  double secs = ((double)end.s - (double)start.s) + ((double)end.ns - (double)start.ns) / 1e9;
  {
    omni_mutex_lock l(benchMu);
    quiet = false;
  }
  std::ostringstream o;
  o << "rate: " << n / secs;
  say(o.str());
}

#define RC_OK \
  { return RTC::RTC_OK; }
class ComponentImpl : public POA_RTC::RTObject {
 public:
  ComponentImpl(const std::string &name) : name_(name) {}
  std::vector<PortImpl *> ports;

  RTC::ReturnCode_t on_initialize() RC_OK RTC::ReturnCode_t on_finalize() RC_OK
  RTC::ReturnCode_t on_startup(RTC::ExecutionContextHandle_t) RC_OK
  RTC::ReturnCode_t on_shutdown(RTC::ExecutionContextHandle_t) RC_OK
  RTC::ReturnCode_t on_activated(RTC::ExecutionContextHandle_t) RC_OK
  RTC::ReturnCode_t on_deactivated(RTC::ExecutionContextHandle_t) RC_OK
  RTC::ReturnCode_t on_aborting(RTC::ExecutionContextHandle_t) RC_OK
  RTC::ReturnCode_t on_error(RTC::ExecutionContextHandle_t) RC_OK
  RTC::ReturnCode_t on_reset(RTC::ExecutionContextHandle_t) RC_OK
  RTC::ReturnCode_t initialize() RC_OK RTC::ReturnCode_t finalize() RC_OK
  CORBA::Boolean is_alive(RTC::ExecutionContext_ptr) { return true; }
  RTC::ReturnCode_t exit() RC_OK
  RTC::ExecutionContextHandle_t attach_context(RTC::ExecutionContext_ptr) { return -1; }
  RTC::ReturnCode_t detach_context(RTC::ExecutionContextHandle_t) { return RTC::BAD_PARAMETER; }
  RTC::ExecutionContext_ptr get_context(RTC::ExecutionContextHandle_t) { return RTC::ExecutionContext::_nil(); }
  RTC::ExecutionContextList *get_owned_contexts() { return new RTC::ExecutionContextList(); }
  RTC::ExecutionContextList *get_participating_contexts() { return new RTC::ExecutionContextList(); }
  RTC::ExecutionContextHandle_t get_context_handle(RTC::ExecutionContext_ptr) { return -1; }
  char *get_sdo_id() { return CORBA::string_dup(name_.c_str()); }
  char *get_sdo_type() { return CORBA::string_dup("rtcpeer"); }
  SDOPackage::DeviceProfile *get_device_profile() { return new SDOPackage::DeviceProfile(); }
  SDOPackage::ServiceProfileList *get_service_profiles() { return new SDOPackage::ServiceProfileList(); }
  SDOPackage::ServiceProfile *get_service_profile(const char *) { throw SDOPackage::InvalidParameter("none"); }
  SDOPackage::SDOService_ptr get_sdo_service(const char *) { throw SDOPackage::InvalidParameter("none"); }
  SDOPackage::Configuration_ptr get_configuration() { return SDOPackage::Configuration::_nil(); }
  SDOPackage::Monitoring_ptr get_monitoring() { throw SDOPackage::InterfaceNotImplemented("none"); }
  SDOPackage::OrganizationList *get_organizations() { return new SDOPackage::OrganizationList(); }
  SDOPackage::NVList *get_status_list() { return new SDOPackage::NVList(); }
  CORBA::Any *get_status(const char *) { throw SDOPackage::InvalidParameter("none"); }
  SDOPackage::OrganizationList *get_owned_organizations() { return new SDOPackage::OrganizationList(); }
  RTC::ComponentProfile *get_component_profile() {
    RTC::ComponentProfile *cp = new RTC::ComponentProfile();
    cp->instance_name = CORBA::string_dup(name_.c_str());
    cp->type_name = CORBA::string_dup("rtcpeer");
    return cp;
  }
  RTC::PortServiceList *get_ports() {
    RTC::PortServiceList *l = new RTC::PortServiceList();
    l->length(ports.size());
    for (size_t i = 0; i < ports.size(); i++) (*l)[i] = ports[i]->_this();
    return l;
  }

 private:
  std::string name_;
};

static void bindPath(const std::string &path, CORBA::Object_ptr ref) {
  CORBA::Object_var ns = orb->resolve_initial_references("NameService");
  CosNaming::NamingContextExt_var root = CosNaming::NamingContextExt::_narrow(ns);
  CosNaming::Name_var name = root->to_name(path.c_str());
  CosNaming::NamingContext_var ctx = CosNaming::NamingContext::_duplicate(root);
  for (CORBA::ULong i = 0; i + 1 < name->length(); i++) {
    CosNaming::Name one;
    one.length(1);
    one[0] = name[i];
    try {
      ctx = ctx->bind_new_context(one);
    } catch (CosNaming::NamingContext::AlreadyBound &) {
      CORBA::Object_var o = ctx->resolve(one);
      ctx = CosNaming::NamingContext::_narrow(o);
    }
  }
  CosNaming::Name last;
  last.length(1);
  last[0] = name[name->length() - 1];
  ctx->rebind(last, ref);
}

static int serve(const std::string &name, const std::string &type, bool echoing) {
  Codec *codec = codecFor(type);
  std::string instance = name.substr(name.rfind('/') + 1);
  instance = instance.substr(0, instance.find('.'));
  ComponentImpl *comp = new ComponentImpl(instance);
  PortableServer::ObjectId_var cid = poa->activate_object(comp);
  PortImpl *in = new PortImpl(instance + ".in", true, codec);
  PortImpl *out = new PortImpl(instance + ".out", false, codec);
  PortableServer::ObjectId_var iid = poa->activate_object(in);
  PortableServer::ObjectId_var oid = poa->activate_object(out);
  RTC::RTObject_var ref = comp->_this();
  in->owner = RTC::RTObject::_duplicate(ref);
  out->owner = RTC::RTObject::_duplicate(ref);
  comp->ports.push_back(in);
  comp->ports.push_back(out);
  if (echoing) echoTo = out;
  poa->the_POAManager()->activate();
  bindPath(name, ref);
  say("ready");
  std::string line;
  while (std::getline(std::cin, line)) {
    long n, w;
    if (sscanf(line.c_str(), "!bench %ld %ld", &n, &w) == 2 && n > 0 && w > 0) {
      bench(out, n, w);
      continue;
    }
    out->write(line);
  }
  // Standard input ended: serve until killed.
  orb->run();
  return 0;
}

int main(int argc, char **argv) {
  try {
    orb = CORBA::ORB_init(argc, argv);
    CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
    poa = PortableServer::POA::_narrow(obj);
    if (argc < 3) {
      std::cerr << "usage: rtcpeer cat|act|deact|exit|con|dis|serve NAME..." << std::endl;
      return 2;
    }
    std::string cmd(argv[1]);
    if (cmd == "cat") return cat(argv[2]);
    if (cmd == "act" || cmd == "deact") {
      RTC::RTObject_var rtc = component(argv[2]);
      RTC::ExecutionContextList_var ecs = rtc->get_owned_contexts();
      RTC::ReturnCode_t rc = cmd == "act" ? ecs[0]->activate_component(rtc) : ecs[0]->deactivate_component(rtc);
      say(std::string("rc: ") + rcName(rc));
      return 0;
    }
    if (cmd == "exit") {
      RTC::RTObject_var rtc = component(argv[2]);
      say(std::string("rc: ") + rcName(rtc->exit()));
      return 0;
    }
    if (cmd == "con" && argc >= 4) {
      RTC::ConnectorProfile cp;
      cp.name = CORBA::string_dup("rtcpeer_con");
      cp.connector_id = CORBA::string_dup("");
      cp.ports.length(2);
      cp.ports[0] = port(argv[2]);
      cp.ports[1] = port(argv[3]);
      setNV(cp.properties, "dataport.interface_type", "corba_cdr");
      setNV(cp.properties, "dataport.dataflow_type", "push");
      setNV(cp.properties, "dataport.subscription_type", "flush");
      for (int i = 4; i < argc; i++) {
        std::string kv(argv[i]);
        size_t eq = kv.find('=');
        std::string k = kv.substr(0, eq);
        for (CORBA::ULong j = 0; j < cp.properties.length(); j++)
          if (k == cp.properties[j].name.in()) cp.properties[j].value <<= kv.substr(eq + 1).c_str();
        if (nvString(cp.properties, k.c_str()) != kv.substr(eq + 1)) setNV(cp.properties, k.c_str(), kv.substr(eq + 1).c_str());
      }
      RTC::ReturnCode_t rc = cp.ports[0]->connect(cp);
      say(std::string("rc: ") + rcName(rc));
      say(std::string("id: ") + cp.connector_id.in());
      for (CORBA::ULong j = 0; j < cp.properties.length(); j++) say(std::string("property: ") + cp.properties[j].name.in());
      return 0;
    }
    if (cmd == "dis") {
      RTC::PortService_var p = port(argv[2]);
      say(std::string("rc: ") + rcName(p->disconnect_all()));
      return 0;
    }
    if (cmd == "serve") return serve(argv[2], argc > 3 ? argv[3] : "TimedString", argc > 4 && std::string(argv[4]) == "echo");
    std::cerr << "unknown command " << cmd << std::endl;
    return 2;
  } catch (std::string &s) {
    say("error: " + s);
    return 1;
  } catch (CORBA::Exception &e) {
    say(std::string("error: ") + e._name());
    return 1;
  }
}
