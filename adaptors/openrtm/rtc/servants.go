package rtc

import (
	"context"

	"github.com/seatml/seat/adaptors/openrtm/corba"
)

// rtObject serves the component as OpenRTM::DataFlowComponent: the
// RTObject, LightweightRTObject, ComponentAction and SDO operations.
type rtObject Component

func (*rtObject) RepositoryIDs() []string {
	return []string{IDDataFlowComponent, IDRTObject, "IDL:omg.org/RTC/DataFlowComponent:1.0",
		"IDL:omg.org/RTC/LightweightRTObject:1.0", "IDL:omg.org/RTC/ComponentAction:1.0",
		"IDL:omg.org/RTC/DataFlowComponentAction:1.0", "IDL:org.omg/SDOPackage/SDO:1.0",
		"IDL:org.omg/SDOPackage/SDOSystemElement:1.0"}
}

func invalidParameter(what string) error {
	return &corba.UserException{ID: idInvalidParameter, Members: func(e *corba.Encoder) error {
		e.WriteString(what)
		return nil
	}}
}

func (o *rtObject) Invoke(_ context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	c := (*Component)(o)
	switch op {
	case "on_initialize", "on_finalize":
		res.WriteULong(uint32(OK))
	case "on_startup", "on_shutdown", "on_activated", "on_deactivated", "on_aborting", "on_error", "on_reset",
		"on_execute", "on_state_update", "on_rate_changed":
		// The callbacks an execution context makes: seat's component
		// has its own, which calls none of them; a tool's call does
		// nothing.
		args.ReadLong()
		res.WriteULong(uint32(OK))
	case "initialize", "finalize":
		// Done when the component was made; finalized by exit.
		res.WriteULong(uint32(PreconditionNotMet))
	case "is_alive":
		ec := args.ReadIOR()
		res.WriteBoolean(args.Err() == nil && sameObject(ec, c.ecRef) && c.State() != Created)
	case "exit":
		res.WriteULong(uint32(c.exit()))
	case "attach_context":
		args.ReadIOR()
		res.WriteLong(-1) // seat's component takes part in its own context only
	case "detach_context":
		args.ReadLong()
		res.WriteULong(uint32(BadParameter))
	case "get_context":
		if args.ReadLong() == 0 {
			res.WriteIOR(c.ecRef)
		} else {
			res.WriteIOR(nil)
		}
	case "get_owned_contexts":
		res.WriteULong(1)
		res.WriteIOR(c.ecRef)
	case "get_participating_contexts", "get_owned_organizations", "get_organizations", "get_service_profiles", "get_status_list":
		res.WriteULong(0)
	case "get_context_handle":
		if sameObject(args.ReadIOR(), c.ecRef) {
			res.WriteLong(0)
		} else {
			res.WriteLong(-1)
		}
	case "get_component_profile":
		cp, err := c.profile()
		if err != nil {
			return err
		}
		return cp.write(res)
	case "get_ports":
		ports := c.portList()
		res.WriteULong(uint32(len(ports)))
		for _, p := range ports {
			res.WriteIOR(p.ref)
		}
	case "get_sdo_id":
		res.WriteString(c.opts.InstanceName)
	case "get_sdo_type":
		res.WriteString(c.opts.TypeName)
	case "get_device_profile":
		res.WriteString("") // device_type
		res.WriteString(c.opts.Vendor)
		res.WriteString(c.opts.TypeName) // model
		res.WriteString(c.opts.Version)
		res.WriteULong(0) // properties
	case "get_service_profile", "get_sdo_service", "get_status":
		return invalidParameter(op + ": " + args.ReadString("id") + " is not known")
	case "get_configuration":
		res.WriteIOR(c.cfgRef)
	case "get_monitoring":
		res.WriteIOR(nil)
	default:
		return corba.BadOperation()
	}
	return args.Err()
}

func (c *Component) portList() []*Port {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Port(nil), c.ports...)
}

// executionContext serves the component's own periodic execution
// context (RTC::ExecutionContextService), through which tools such as
// rtact activate and deactivate it.
type executionContext Component

func (*executionContext) RepositoryIDs() []string {
	return []string{IDExecutionContextSvc, IDExecutionContext, IDSDOService}
}

func (x *executionContext) Invoke(_ context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	c := (*Component)(x)
	switch op {
	case "is_running":
		c.mu.Lock()
		res.WriteBoolean(c.running)
		c.mu.Unlock()
	case "start", "stop":
		c.mu.Lock()
		rc := OK
		if c.running == (op == "start") {
			rc = PreconditionNotMet
		}
		c.running = op == "start"
		c.mu.Unlock()
		res.WriteULong(uint32(rc))
	case "get_rate":
		c.mu.Lock()
		res.WriteDouble(c.rate)
		c.mu.Unlock()
	case "set_rate":
		r := args.ReadDouble()
		rc := BadParameter
		if r > 0 {
			c.mu.Lock()
			c.rate, rc = r, OK
			c.mu.Unlock()
		}
		res.WriteULong(uint32(rc))
	case "add_component", "remove_component":
		args.ReadIOR()
		res.WriteULong(uint32(Unsupported))
	case "activate_component", "deactivate_component", "reset_component":
		if !c.ownRef(args.ReadIOR()) {
			res.WriteULong(uint32(BadParameter))
			break
		}
		var rc ReturnCode
		switch op {
		case "activate_component":
			rc = c.Activate()
		case "deactivate_component":
			rc = c.Deactivate()
		default:
			rc = c.transition(ErrorState, Inactive)
		}
		res.WriteULong(uint32(rc))
	case "get_component_state":
		st := Created
		if c.ownRef(args.ReadIOR()) {
			st = c.State()
		}
		res.WriteULong(uint32(st))
	case "get_kind":
		res.WriteULong(0) // PERIODIC
	case "get_profile":
		c.mu.Lock()
		rate := c.rate
		c.mu.Unlock()
		res.WriteULong(0) // PERIODIC
		res.WriteDouble(rate)
		res.WriteIOR(c.ref)
		res.WriteULong(1)
		res.WriteIOR(c.ref)
		var props NVList
		props.Set("type", "PeriodicExecutionContext")
		return writeNVList(res, props)
	default:
		return corba.BadOperation()
	}
	return args.Err()
}

// configuration serves SDOPackage::Configuration with one empty
// configuration set, "default": tools that show a component's
// configuration (rtcat, RTSystemEditor) ask for it.
type configuration struct{}

func (configuration) RepositoryIDs() []string { return []string{IDConfiguration} }

func writeDefaultSet(e *corba.Encoder) {
	e.WriteString("default")
	e.WriteString("")
	e.WriteULong(0)
}

func (configuration) Invoke(_ context.Context, op string, args *corba.Decoder, res *corba.Encoder) error {
	switch op {
	case "get_configuration_parameters", "get_configuration_parameter_values":
		res.WriteULong(0)
	case "get_configuration_sets":
		res.WriteULong(1)
		writeDefaultSet(res)
	case "get_active_configuration_set":
		writeDefaultSet(res)
	case "get_configuration_set", "activate_configuration_set":
		id := args.ReadString("configuration set id")
		if id != "default" {
			return invalidParameter("no configuration set " + id)
		}
		if op == "get_configuration_set" {
			writeDefaultSet(res)
		} else {
			res.WriteBoolean(true)
		}
	case "get_configuration_parameter_value":
		return invalidParameter("no parameter " + args.ReadString("parameter name"))
	case "set_configuration_parameter", "set_configuration_set_values", "add_configuration_set", "remove_configuration_set",
		"set_device_profile", "add_service_profile", "add_organization", "remove_service_profile", "remove_organization":
		// seat's component has no parameters to change.
		res.WriteBoolean(false)
	default:
		return corba.BadOperation()
	}
	return args.Err()
}
