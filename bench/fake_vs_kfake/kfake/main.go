// franz-go's kfake behind the same contract as the kwire-fake-cluster binary, so that
// bench/fake_vs_kfake.sh starts and measures both alike: `kfake-serve --nodes N` serves an
// in-memory cluster on loopback ports until SIGINT or SIGTERM, and prints
// `bootstrap.servers=HOST:PORT,…` as its first line on stdout.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	nodes := flag.Int("nodes", 3, "brokers in the cluster")
	flag.Parse()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(*nodes))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake-serve:", err)
		os.Exit(1)
	}
	fmt.Printf("bootstrap.servers=%s\n", strings.Join(cluster.ListenAddrs(), ","))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	cluster.Close()
}
