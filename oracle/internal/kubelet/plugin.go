package kubelet

import (
	"context"
	"errors"
	"path/filepath"
	"sort"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// scriptedPlugin is a device plugin that lives in the oracle's process: it
// answers the device manager's calls directly instead of over a socket.
// It is what a device plugin is to the kubelet (an outside component), so
// the device manager itself stays the real one: it receives the scenario's
// devices through its own ListAndWatch receiver, computes hints and
// filters devices by affinity itself. The plugin asks for no
// PreStartContainer call. It offers a preferred allocation, a
// deterministic one: the devices that must be included, then the other
// available devices in the order the scenario lists them. Without it the
// device manager picks among eligible devices by ranging over a Go set
// (at random); with it every pick the device manager leaves to the plugin
// is the same in every run, and podnuma makes the same pick.
type scriptedPlugin struct {
	resource string
	socket   string
	order    map[string]int // device id -> its place in the scenario
}

func (p *scriptedPlugin) API() pluginapi.DevicePluginClient { return p }
func (p *scriptedPlugin) Resource() string                  { return p.resource }
func (p *scriptedPlugin) SocketPath() string                { return p.socket }

func (p *scriptedPlugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty, ...grpc.CallOption) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

func (p *scriptedPlugin) ListAndWatch(context.Context, *pluginapi.Empty, ...grpc.CallOption) (grpc.ServerStreamingClient[pluginapi.ListAndWatchResponse], error) {
	return nil, errors.New("the scripted plugin sends its devices once, through PluginListAndWatchReceiver")
}

// GetPreferredAllocation prefers, per container, the devices that must be
// included and then the available ones in the scenario's order, up to the
// allocation size.
func (p *scriptedPlugin) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest, _ ...grpc.CallOption) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, cr := range req.ContainerRequests {
		chosen := append([]string{}, cr.MustIncludeDeviceIDs...)
		must := map[string]bool{}
		for _, id := range chosen {
			must[id] = true
		}
		rest := []string{}
		for _, id := range cr.AvailableDeviceIDs {
			if !must[id] {
				rest = append(rest, id)
			}
		}
		sort.Slice(rest, func(i, j int) bool { return p.before(rest[i], rest[j]) })
		for _, id := range rest {
			if len(chosen) >= int(cr.AllocationSize) {
				break
			}
			chosen = append(chosen, id)
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: chosen})
	}
	return resp, nil
}

// before orders device ids as the scenario lists them (ids it does not
// list last, by id).
func (p *scriptedPlugin) before(a, b string) bool {
	ia, oka := p.order[a]
	ib, okb := p.order[b]
	switch {
	case oka && okb:
		return ia < ib
	case oka != okb:
		return oka
	}
	return a < b
}

// Allocate grants every request (one empty response per container).
func (p *scriptedPlugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest, _ ...grpc.CallOption) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for range req.ContainerRequests {
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{})
	}
	return resp, nil
}

func (p *scriptedPlugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest, ...grpc.CallOption) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// registerDevices connects one scripted plugin per resource of the
// scenario's devices and delivers its device list, healthy, with the NUMA
// affinity the scenario gives.
func (n *Node) registerDevices() error {
	logger := klog.FromContext(n.ctx)
	for _, res := range n.scn.DeviceOrder {
		p := &scriptedPlugin{resource: res, socket: filepath.Join(n.stateDir, "device-plugins", res+".sock"), order: map[string]int{}}
		for i, d := range n.scn.Devices[res] {
			if _, seen := p.order[d.ID]; !seen {
				p.order[d.ID] = i
			}
		}
		if err := n.devices.PluginConnected(n.ctx, res, p); err != nil {
			return err
		}
		resp := &pluginapi.ListAndWatchResponse{}
		for _, d := range n.scn.Devices[res] {
			dev := &pluginapi.Device{ID: d.ID, Health: pluginapi.Healthy}
			if len(d.NUMANodes) > 0 {
				dev.Topology = &pluginapi.TopologyInfo{}
				for _, id := range d.NUMANodes {
					dev.Topology.Nodes = append(dev.Topology.Nodes, &pluginapi.NUMANode{ID: int64(id)})
				}
			}
			resp.Devices = append(resp.Devices, dev)
		}
		n.devices.PluginListAndWatchReceiver(logger, res, resp)
	}
	return nil
}
