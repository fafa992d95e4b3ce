// A bot for the Brag referee, straight on the protocol (docs/bot-protocol.md), without the kit: it
// answers the handshake, then each decision request with the first of its legal actions.
package main

import (
	"io"
	"log"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc"

	pb "mybot/referee/v2"
)

type bot struct {
	pb.UnimplementedBotServiceServer
}

func (bot) Play(stream pb.BotService_PlayServer) error {
	for {
		request, err := stream.Recv()
		if err == io.EOF {
			return nil // the referee ended its side: end ours
		}
		if err != nil {
			return err
		}
		switch message := request.Message.(type) {
		case *pb.PlayRequest_Handshake:
			err = stream.Send(&pb.PlayResponse{Message: &pb.PlayResponse_Handshake{Handshake: &pb.HandshakeResponse{
				ProtocolVersions: []uint32{2},
				Games:            []pb.Game{pb.Game_GAME_STOP_THE_BUS, pb.Game_GAME_BASTARD_BRAG},
				Name:             "my-bot",
				Version:          "1.0",
			}}})
		case *pb.PlayRequest_DecisionRequest:
			asked := message.DecisionRequest
			err = stream.Send(&pb.PlayResponse{Message: &pb.PlayResponse_Decision{Decision: &pb.Decision{
				DecisionNumber: asked.GetDecisionNumber(),
				Action:         asked.GetLegalActions()[0],
			}}})
		case *pb.PlayRequest_FaultNotice:
			log.Printf("fault: %s: %s", message.FaultNotice.GetKind(), message.FaultNotice.GetDetail())
		}
		if err != nil {
			return err
		}
	}
}

func main() {
	address := os.Getenv("REFEREE_BOT_ADDRESS")
	network, where := "tcp", address
	if strings.HasPrefix(address, "unix:") {
		network, where = "unix", strings.TrimPrefix(address, "unix:")
	}
	listener, err := net.Listen(network, where)
	if err != nil {
		log.Fatalf("cannot listen on %s: %v", address, err)
	}
	server := grpc.NewServer()
	pb.RegisterBotServiceServer(server, bot{})
	log.Printf("listening on %s", address)
	if err := server.Serve(listener); err != nil {
		log.Fatal(err)
	}
}
