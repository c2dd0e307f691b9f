// Package main is the tallyd entry point (a stand-in for the service the memory files describe).
package main

import "fmt"

func main() {
	fmt.Println("tallyd")
}
