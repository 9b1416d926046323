// Command fake-cri serves the CRI runtime and image services of
// k8s.io/cri-client's fake remote runtime on a unix socket, so a real
// kubelet can run pods without a container runtime: sandboxes and
// containers exist only in this process's memory, while the kubelet still
// admits pods, runs its resource managers, writes its checkpoints and
// creates the pod cgroups itself.
//
// usage: fake-cri -listen unix:///path/to/cri.sock
//
// Every CreateContainer request (the Linux resources the kubelet asks the
// runtime to apply: cpuset, shares, quota, memory limit, ...) is appended
// as one JSON line to the file named by -record, when given.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"google.golang.org/grpc"
	kubeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
	"k8s.io/cri-client/pkg/util"
)

// recorder wraps the fake runtime to log the resources of each
// CreateContainer and UpdateContainerResources call.
type recorder struct {
	*fake.RemoteRuntime
	mu   sync.Mutex
	file *os.File
}

type record struct {
	Call      string                          `json:"call"`
	Pod       string                          `json:"pod,omitempty"`
	Namespace string                          `json:"namespace,omitempty"`
	PodUID    string                          `json:"podUID,omitempty"`
	Container string                          `json:"container,omitempty"`
	ID        string                          `json:"id,omitempty"`
	Linux     *kubeapi.LinuxContainerResources `json:"linux,omitempty"`
}

func (r *recorder) write(rec record) {
	if r.file == nil {
		return
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.file.Write(append(line, '\n'))
}

func (r *recorder) CreateContainer(ctx context.Context, req *kubeapi.CreateContainerRequest) (*kubeapi.CreateContainerResponse, error) {
	resp, err := r.RemoteRuntime.CreateContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	rec := record{Call: "CreateContainer", ID: resp.ContainerId}
	if md := req.GetSandboxConfig().GetMetadata(); md != nil {
		rec.Pod, rec.Namespace, rec.PodUID = md.Name, md.Namespace, md.Uid
	}
	if md := req.GetConfig().GetMetadata(); md != nil {
		rec.Container = md.Name
	}
	rec.Linux = req.GetConfig().GetLinux().GetResources()
	r.write(rec)
	return resp, nil
}

func (r *recorder) UpdateContainerResources(ctx context.Context, req *kubeapi.UpdateContainerResourcesRequest) (*kubeapi.UpdateContainerResourcesResponse, error) {
	resp, err := r.RemoteRuntime.UpdateContainerResources(ctx, req)
	if err != nil {
		return nil, err
	}
	r.write(record{Call: "UpdateContainerResources", ID: req.ContainerId, Linux: req.Linux})
	return resp, nil
}

func main() {
	listen := flag.String("listen", "", "CRI endpoint to serve, unix:///path/to.sock")
	recordPath := flag.String("record", "", "append each container's requested Linux resources to this file (JSON lines)")
	flag.Parse()
	if *listen == "" {
		fmt.Fprintln(os.Stderr, "fake-cri: -listen is required")
		os.Exit(2)
	}
	rt := fake.NewFakeRemoteRuntime()
	// The kubelet refuses an image whose size is 0: every pulled image
	// weighs 1 MiB here.
	rt.ImageService.SetFakeImageSize(1 << 20)
	rec := &recorder{RemoteRuntime: rt}
	if *recordPath != "" {
		f, err := os.OpenFile(*recordPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake-cri: %v\n", err)
			os.Exit(1)
		}
		rec.file = f
	}
	// The fake runtime registers itself on its own gRPC server; serve the
	// recorder instead so CreateContainer goes through it.
	server := grpc.NewServer()
	kubeapi.RegisterRuntimeServiceServer(server, rec)
	kubeapi.RegisterImageServiceServer(server, rec)
	listener, err := util.CreateListener(*listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake-cri: listen on %s: %v\n", *listen, err)
		os.Exit(1)
	}
	rt.RuntimeService.FakeStatus = &kubeapi.RuntimeStatus{
		Conditions: []*kubeapi.RuntimeCondition{
			{Type: kubeapi.RuntimeReady, Status: true},
			{Type: kubeapi.NetworkReady, Status: true},
		},
	}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop
		server.Stop()
	}()
	fmt.Fprintf(os.Stderr, "fake-cri: serving %s\n", *listen)
	if err := server.Serve(listener); err != nil {
		fmt.Fprintf(os.Stderr, "fake-cri: %v\n", err)
		os.Exit(1)
	}
}
