// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3 etcdmain),
// built from the Go module proxy at the version pinned in go.mod, with
// etcd's usual flags (--data-dir, --listen-client-urls, ...).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
