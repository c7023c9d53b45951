// An Apollo gateway composing the subgraphs named in SUBGRAPHS (JSON
// [{name, url}]) by introspection (`_service { sdl }`) at start. Prints
// {"ready": url} once listening on a free loopback port.
import { ApolloGateway, IntrospectAndCompose } from "@apollo/gateway";
import { ApolloServer } from "@apollo/server";
import { startStandaloneServer } from "@apollo/server/standalone";

const subgraphs = JSON.parse(process.env.SUBGRAPHS ?? "[]");
const gateway = new ApolloGateway({ supergraphSdl: new IntrospectAndCompose({ subgraphs }) });
const server = new ApolloServer({ gateway });
const { url } = await startStandaloneServer(server, { listen: { host: "127.0.0.1", port: 0 } });
console.log(JSON.stringify({ ready: url }));
