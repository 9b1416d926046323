package kubelet

import (
	"context"
	"errors"
	"path/filepath"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// scriptedPlugin is a device plugin that lives in the oracle's process: it
// answers the device manager's calls directly instead of over a socket.
// It is what a device plugin is to the kubelet (an outside component), so
// the device manager itself stays the real one: it receives the scenario's
// devices through its own ListAndWatch receiver, computes hints and picks
// devices itself. The plugin asks for no PreStartContainer call and offers
// no preferred allocation, so the device manager's own choice stands.
type scriptedPlugin struct {
	resource string
	socket   string
}

func (p *scriptedPlugin) API() pluginapi.DevicePluginClient { return p }
func (p *scriptedPlugin) Resource() string                  { return p.resource }
func (p *scriptedPlugin) SocketPath() string                { return p.socket }

func (p *scriptedPlugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty, ...grpc.CallOption) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

func (p *scriptedPlugin) ListAndWatch(context.Context, *pluginapi.Empty, ...grpc.CallOption) (grpc.ServerStreamingClient[pluginapi.ListAndWatchResponse], error) {
	return nil, errors.New("the scripted plugin sends its devices once, through PluginListAndWatchReceiver")
}

func (p *scriptedPlugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest, ...grpc.CallOption) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
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
		p := &scriptedPlugin{resource: res, socket: filepath.Join(n.stateDir, "device-plugins", res+".sock")}
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
