module github.com/seatml/seat

go 1.26.8

require (
	github.com/beevik/etree v1.8.1
	github.com/bluenviron/goroslib/v2 v2.1.5
	github.com/eclipse/paho.mqtt.golang v1.5.1
	github.com/google/go-cmp v0.7.0
	github.com/gorilla/websocket v1.5.3
	github.com/looplab/fsm v1.0.3
	github.com/qmuntal/stateless v1.7.2
	github.com/yuin/gopher-lua v1.1.2
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.28.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/text v0.43.0
)

require (
	github.com/gookit/color v1.5.4 // indirect
	github.com/xo/terminfo v0.0.0-20210125001918-ca9a967f8778 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/net v0.44.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.36.0 // indirect
)
