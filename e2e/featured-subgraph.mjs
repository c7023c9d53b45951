// A second, tiny subgraph for the federation test: `Query.featured` lists
// `Entity` references by key only (`resolvable: false`), so every other
// `Entity` field must come from redstring through the gateway.
//
// FEATURED: JSON [{title, tenantId, id}]. Prints {"ready": url} once listening
// on a free loopback port.
import { ApolloServer } from "@apollo/server";
import { startStandaloneServer } from "@apollo/server/standalone";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse } from "graphql";

const featured = JSON.parse(process.env.FEATURED ?? "[]");

const typeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type Query {
    featured: [Featured!]!
  }

  type Featured {
    title: String!
    entity: Entity!
  }

  type Entity @key(fields: "tenantId id", resolvable: false) {
    tenantId: ID!
    id: ID!
  }
`);

const resolvers = {
  Query: {
    featured: () => featured,
  },
  Featured: {
    entity: ({ tenantId, id }) => ({ __typename: "Entity", tenantId, id }),
  },
};

const server = new ApolloServer({ schema: buildSubgraphSchema({ typeDefs, resolvers }) });
const { url } = await startStandaloneServer(server, { listen: { host: "127.0.0.1", port: 0 } });
console.log(JSON.stringify({ ready: url }));
