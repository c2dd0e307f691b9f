// Package main is a stand-in for the tallyd service the memory files describe.
package main

import "fmt"

func main() {
	fmt.Println("tallyd")
}
